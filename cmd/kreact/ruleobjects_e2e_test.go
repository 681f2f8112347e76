//go:build e2e

package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/ruleobjects"
)

// teamRule is a Rule object in namespace ns that labels the ConfigMaps of
// its namespace with version value.
func teamRule(name, ns, value, extra string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
  namespace: %s
spec:
  watch: [{resource: configmaps}]
  permissions: [{resources: [configmaps], verbs: [patch]}]
%s  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {labels: {version: %q}}});
    }
`, name, ns, extra, value)
}

// installRuleCRDs installs the CRDs of rule objects, and deletes every
// rule object when the test ends: the tests share the cluster, and a
// kreact run --rule-objects of another test must not find them.
func installRuleCRDs(t *testing.T) {
	t.Helper()
	if out, err := kubectlE2E(t, "", "apply", "--server-side", "-f", "../../deploy/crds/"); err != nil {
		t.Fatalf("installing the CRDs: %v\n%s", err, out)
	}
	t.Cleanup(func() {
		// t.Context() has ended by now.
		ctx, dyn := context.Background(), dynamicClient(t)
		for _, gvr := range []schema.GroupVersionResource{ruleobjects.RulesGVR, ruleobjects.ClusterRulesGVR} {
			list, err := dyn.Resource(gvr).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Errorf("list %s: %v", gvr.Resource, err)
				continue
			}
			for _, o := range list.Items {
				var ri dynamic.ResourceInterface = dyn.Resource(gvr)
				if ns := o.GetNamespace(); ns != "" {
					ri = dyn.Resource(gvr).Namespace(ns)
				}
				if err := ri.Delete(ctx, o.GetName(), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
					t.Errorf("delete %s %s: %v", gvr.Resource, o.GetName(), err)
				}
			}
		}
	})
}

func applyObject(t *testing.T, manifest string) {
	t.Helper()
	if out, err := kubectlE2E(t, manifest, "apply", "-f", "-"); err != nil {
		t.Fatalf("kubectl apply: %v\n%s\n%s", err, out, manifest)
	}
}

// readyOf returns the Ready condition of a rule object and its status.
func readyOf(t *testing.T, dyn dynamic.Interface, ns, name string) (map[string]any, map[string]any, int64) {
	gvr := ruleobjects.RulesGVR
	var ri dynamic.ResourceInterface = dyn.Resource(gvr).Namespace(ns)
	if ns == "" {
		ri = dyn.Resource(ruleobjects.ClusterRulesGVR)
	}
	obj, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		return nil, nil, 0
	}
	st, _ := obj.Object["status"].(map[string]any)
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == "Ready" {
			return m, st, obj.GetGeneration()
		}
	}
	return nil, st, obj.GetGeneration()
}

// waitReady waits for the rule object's Ready condition to have status
// want for its current generation, and returns the status.
func waitReady(t *testing.T, dyn dynamic.Interface, ns, name, want string) map[string]any {
	t.Helper()
	var st map[string]any
	testcluster.Eventually(t, fmt.Sprintf("rule object %s/%s Ready %s", ns, name, want), func() bool {
		var cond map[string]any
		var gen int64
		cond, st, gen = readyOf(t, dyn, ns, name)
		return cond != nil && cond["status"] == want && fmt.Sprint(cond["observedGeneration"]) == fmt.Sprint(gen)
	})
	return st
}

// TestRuleObjects: kreact run --rule-objects, with no rule file, runs the
// rules that teams kubectl apply in their namespaces and that
// administrators apply as ClusterRules. Each rule object's status says
// whether it runs; an edit replaces the running version, a broken edit
// leaves the last good one running and says where the problem is, a Rule
// that reaches outside its namespace is refused in its status, and
// deleting a finalizer rule releases its finalizers.
func TestRuleObjects(t *testing.T) {
	dyn := dynamicClient(t)
	installRuleCRDs(t)
	for _, ns := range []string{"objects-a", "objects-b"} {
		ensureNamespace(t, dyn, ns)
	}
	// A team's Rule acts as its namespace's default ServiceAccount
	// (docs/multitenancy.md): the team grants it what its Rules do.
	grantDefaultServiceAccount(t, "objects-a", "configmaps", "get", "list", "watch", "patch")
	grantDefaultServiceAccount(t, "objects-b", "configmaps", "get", "list", "watch", "patch")
	startKreact(t, "run", "--rule-objects", "--status-interval", "1s", "--tenant-max-workers", "2", "--metrics-bind-address", "", "--health-probe-bind-address", "")

	applyObject(t, teamRule("labeller", "objects-a", "v1", ""))
	createNamespacedConfigMap(t, dyn, "objects-a", "one")
	createNamespacedConfigMap(t, dyn, "objects-b", "other")
	testcluster.Eventually(t, "the Rule labels its namespace's ConfigMap", func() bool { return labelOf(t, dyn, "objects-a", "one") == "v1" })
	// Another team's Rule of the same name, in its own namespace.
	applyObject(t, teamRule("labeller", "objects-b", "b1", ""))
	testcluster.Eventually(t, "team b's Rule labels its namespace's ConfigMap", func() bool { return labelOf(t, dyn, "objects-b", "other") == "b1" })
	waitReady(t, dyn, "objects-b", "labeller", "True")
	if got := labelOf(t, dyn, "objects-a", "one"); got != "v1" {
		t.Errorf("team b's Rule reached team a's ConfigMap: label %q", got)
	}
	st := waitReady(t, dyn, "objects-a", "labeller", "True")
	testcluster.Eventually(t, "the status counts the call", func() bool {
		_, st, _ = readyOf(t, dyn, "objects-a", "labeller")
		calls, _ := st["calls"].(int64)
		return calls >= 1
	})

	t.Run("an edit replaces the running version", func(t *testing.T) {
		applyObject(t, teamRule("labeller", "objects-a", "v2", ""))
		start := time.Now()
		testcluster.Eventually(t, "the edited Rule relabels", func() bool { return labelOf(t, dyn, "objects-a", "one") == "v2" })
		t.Logf("from kubectl apply's return to the edit's first action: %v", time.Since(start).Round(10*time.Millisecond))
		waitReady(t, dyn, "objects-a", "labeller", "True")
	})

	t.Run("a broken edit keeps the last good version running", func(t *testing.T) {
		broken := strings.Replace(teamRule("labeller", "objects-a", "v3", ""), "kreact.patch(obj,", "kreact.patch(obj,,", 1)
		applyObject(t, broken)
		st := waitReady(t, dyn, "objects-a", "labeller", "False")
		cond, _, _ := readyOf(t, dyn, "objects-a", "labeller")
		if cond["reason"] != ruleobjects.ReasonInvalid || !strings.Contains(fmt.Sprint(cond["message"]), "keeps running") {
			t.Errorf("Ready %v, want Invalid saying the last good version keeps running", cond)
		}
		probs, _ := st["problems"].([]any)
		if len(probs) == 0 {
			t.Fatalf("status %v has no problems", st)
		}
		p := probs[0].(map[string]any)
		if p["field"] != "spec.script" || !strings.HasPrefix(fmt.Sprint(p["position"]), "2:") {
			t.Errorf("problem %v, want it at spec.script line 2", p)
		}
		createNamespacedConfigMap(t, dyn, "objects-a", "two")
		testcluster.Eventually(t, "the last good version labels a new ConfigMap", func() bool { return labelOf(t, dyn, "objects-a", "two") == "v2" })
	})

	t.Run("a Rule reaching outside its namespace is refused", func(t *testing.T) {
		outside := strings.Replace(teamRule("outsider", "objects-a", "x", ""), "[{resources: [configmaps], verbs: [patch]}]",
			"[{resources: [configmaps], verbs: [patch], namespaces: [objects-b]}]", 1)
		applyObject(t, outside)
		st := waitReady(t, dyn, "objects-a", "outsider", "False")
		if !strings.Contains(fmt.Sprint(st["problems"]), `"objects-b" is outside namespace objects-a`) {
			t.Errorf("problems %v, want the namespace named", st["problems"])
		}
		if got := labelOf(t, dyn, "objects-b", "other"); got != "b1" {
			t.Errorf("a ConfigMap of objects-b got label %q, want b1 from its own team's Rule only", got)
		}
	})

	t.Run("a Rule whose ServiceAccount lacks a permission says which", func(t *testing.T) {
		needy := strings.Replace(teamRule("needy", "objects-a", "x", ""), "[{resources: [configmaps], verbs: [patch]}]",
			"[{resources: [configmaps], verbs: [patch]}, {resources: [secrets], verbs: [delete]}]", 1)
		applyObject(t, needy)
		st := waitReady(t, dyn, "objects-a", "needy", "True")
		want := "system:serviceaccount:objects-a:default may not delete secrets in objects-a"
		if !strings.Contains(fmt.Sprint(st["problems"]), want) {
			t.Errorf("problems %v, want %q", st["problems"], want)
		}
	})

	t.Run("a Rule over the administrator's ceiling is refused", func(t *testing.T) {
		applyObject(t, teamRule("greedy", "objects-a", "x", "  workers: 4\n"))
		st := waitReady(t, dyn, "objects-a", "greedy", "False")
		if !strings.Contains(fmt.Sprint(st["problems"]), "4 is over the limit for a Rule in a namespace, 2 (kreact run --tenant-max-workers)") {
			t.Errorf("problems %v, want the ceiling named", st["problems"])
		}
	})

	t.Run("a ClusterRule runs as a rule file does", func(t *testing.T) {
		applyObject(t, `apiVersion: kreact.dev/v1alpha1
kind: ClusterRule
metadata:
  name: marker
spec:
  watch: [{resource: configmaps, namespaces: [objects-b]}]
  permissions: [{resources: [configmaps], verbs: [patch]}]
  finalizer: true
  script: |
    function onAdd(obj) { kreact.patch(obj, {metadata: {annotations: {marked: "yes"}}}); }
    function onDelete(obj) {}
`)
		testcluster.Eventually(t, "the ClusterRule marks objects-b's ConfigMap", func() bool {
			return annotationOf(t, dyn, "objects-b", "other", "marked") == "yes"
		})
		waitReady(t, dyn, "", "marker", "True")
		testcluster.Eventually(t, "the ClusterRule's finalizer is on the ConfigMap", func() bool {
			return hasFinalizer(t, dyn, "objects-b", "other", finalizers.Name("marker"))
		})
		if out, err := kubectlE2E(t, "", "delete", "clusterrule", "marker"); err != nil {
			t.Fatalf("kubectl delete: %v\n%s", err, out)
		}
		testcluster.Eventually(t, "deleting the ClusterRule releases its finalizer", func() bool {
			return !hasFinalizer(t, dyn, "objects-b", "other", finalizers.Name("marker"))
		})
	})

	t.Run("an isolated ClusterRule runs in the isolated rules' process", func(t *testing.T) {
		applyObject(t, `apiVersion: kreact.dev/v1alpha1
kind: ClusterRule
metadata:
  name: loner
spec:
  watch: [{resource: configmaps, namespaces: [objects-b]}]
  permissions: [{resources: [configmaps], verbs: [patch]}]
  isolate: true
  script: |
    function onAdd(obj) { kreact.patch(obj, {metadata: {annotations: {isolated: "yes"}}}); }
`)
		testcluster.Eventually(t, "the isolated ClusterRule marks objects-b's ConfigMap", func() bool {
			return annotationOf(t, dyn, "objects-b", "other", "isolated") == "yes"
		})
		waitReady(t, dyn, "", "loner", "True")
		if cond, _, _ := readyOf(t, dyn, "", "loner"); cond["reason"] != ruleobjects.ReasonIsolated {
			t.Errorf("Ready %v, want %s", cond, ruleobjects.ReasonIsolated)
		}
	})

	if out, err := kubectlE2E(t, "", "get", "rules", "-n", "objects-a"); err != nil || !strings.Contains(out, "labeller") {
		t.Errorf("kubectl get rules: %v\n%s", err, out)
	} else {
		t.Logf("kubectl get rules:\n%s", out)
	}
}

// grantDefaultServiceAccount grants the ServiceAccount "default" of ns
// verbs on a core resource, as a namespace's administrator grants what its
// team's Rules may do, and waits until the authorizer knows it.
func grantDefaultServiceAccount(t *testing.T, ns, resource string, verbs ...string) {
	t.Helper()
	applyObject(t, fmt.Sprintf(`apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: rules, namespace: %[1]s}
rules: [{apiGroups: [""], resources: [%[2]s], verbs: [%[3]s]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rules, namespace: %[1]s}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: rules}
subjects: [{kind: ServiceAccount, name: default, namespace: %[1]s}]
`, ns, resource, strings.Join(verbs, ", ")))
	testcluster.Eventually(t, "the authorizer to know the grant to "+ns+"'s default ServiceAccount", func() bool {
		out, err := kubectlE2E(t, "", "auth", "can-i", verbs[len(verbs)-1], resource, "-n", ns, "--as", "system:serviceaccount:"+ns+":default")
		return err == nil && strings.TrimSpace(out) == "yes"
	})
}

func hasFinalizer(t *testing.T, dyn dynamic.Interface, ns, name, f string) bool {
	cm, err := dyn.Resource(configMapsGVR).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	return err == nil && slices.Contains(cm.GetFinalizers(), f)
}

// TestRBACIsSufficientForRuleObjects: kreact run --rule-objects, as the
// ServiceAccount that `kreact rbac --rule-objects` prints (here for a rule
// file whose copy is then applied as a ClusterRule), watches the rule
// objects and writes their status with no request refused.
func TestRBACIsSufficientForRuleObjects(t *testing.T) {
	const ns, sa = "kreact-rbac-objects", "kreact-objects-e2e"
	dyn := dynamicClient(t)
	installRuleCRDs(t)
	createNamespace(t, ns)
	dir := t.TempDir()
	rule := labeller(ns, "from-an-object")
	writeRule(t, dir, "labeller.yaml", rule)
	code, manifests, stderr := run(t, "rbac", "-f", dir, "--name", sa, "--namespace", ns, "--rule-objects")
	if code != exitOK {
		t.Fatalf("kreact rbac: %s", transcript(code, manifests, stderr))
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	c := startCLI(t, "run", "--rule-objects", "--status-interval", "1s", "--kubeconfig", writeKubeconfig(t, saConfig))
	applyObject(t, strings.Replace(rule, "kind: Rule", "kind: ClusterRule", 1))
	createNamespacedConfigMap(t, dyn, ns, "cm")
	testcluster.Eventually(t, "the ClusterRule labels the ConfigMap", func() bool { return labelOf(t, dyn, ns, "cm") == "from-an-object" })
	waitReady(t, dyn, "", "labeller", "True")
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	checkRBACSufficient(t, c.stderr.String())
}

// TestRuleObjectsAdmission: with --tenant-admission, the onValidate of a
// team's Rule is served for requests in its namespace only, and deleting
// the Rule removes its webhook; without the flag it is not served, and
// the Rule's status says why.
func TestRuleObjectsAdmission(t *testing.T) {
	dyn := dynamicClient(t)
	installRuleCRDs(t)
	const name = "kreact-objects-adm-e2e"
	for _, ns := range []string{"objadm-a", "objadm-b"} {
		ensureNamespace(t, dyn, ns)
	}
	t.Cleanup(func() {
		if err := dyn.Resource(validatingConfigsGVR).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the webhook configuration: %v", err)
		}
	})
	rule := func(rule string) string {
		return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: %s, namespace: objadm-a}
spec:
  watch: [{resource: configmaps}]
  script: |
    function onValidate(req) {
      if (!req.object.metadata.labels?.owner) return "a ConfigMap needs an owner label";
    }
`, rule)
	}
	start := func(extra ...string) *cli {
		addr := testcluster.FreeAddr(t)
		args := append([]string{"run", "--rule-objects", "--status-interval", "1s", "--kubeconfig", cluster.KubeconfigPath(),
			"--admission-bind-address", addr, "--admission-url", "https://" + addr, "--admission-name", name,
			"--admission-namespace", "kreact-objadm-e2e", "--metrics-bind-address", ""}, extra...)
		return startCLI(t, args...)
	}

	c := start()
	applyObject(t, rule("owners"))
	st := waitReady(t, dyn, "objadm-a", "owners", "False")
	if !strings.Contains(fmt.Sprint(st["problems"]), "unless kreact runs with --tenant-admission") {
		t.Errorf("problems %v, want --tenant-admission named", st["problems"])
	}
	c.stop()

	c = start("--tenant-admission")
	var out string
	testcluster.Eventually(t, "the Rule's onValidate to refuse a ConfigMap of its namespace", func() bool {
		out, _ = kubectlE2E(t, "", "create", "configmap", "no-owner", "-n", "objadm-a")
		return strings.Contains(out, "a ConfigMap needs an owner label")
	})
	if out, err := kubectlE2E(t, "", "create", "configmap", "no-owner", "-n", "objadm-b"); err != nil {
		t.Errorf("a ConfigMap of another namespace was refused: %v\n%s", err, out)
	}
	waitReady(t, dyn, "objadm-a", "owners", "True")
	if out, err := kubectlE2E(t, "", "delete", "rule", "owners", "-n", "objadm-a"); err != nil {
		t.Fatalf("kubectl delete: %v\n%s", err, out)
	}
	testcluster.Eventually(t, "deleting the Rule to remove its webhook configuration", func() bool {
		_, err := dyn.Resource(validatingConfigsGVR).Get(t.Context(), name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	c.stop()
}

// TestRuleObjectsReadiness: kreact run --rule-objects alone is ready once
// it has loaded the rule objects, none of them too (a cluster where no
// team has applied a rule yet), and kreact_rules_loaded counts the rules
// of objects.
func TestRuleObjectsReadiness(t *testing.T) {
	dyn := dynamicClient(t)
	installRuleCRDs(t)
	ensureNamespace(t, dyn, "objready")
	addr := testcluster.FreeAddr(t)
	k := startKreact(t, "run", "--rule-objects", "--metrics-bind-address", addr)
	testcluster.Eventually(t, "kreact to load the rule objects", func() bool {
		return strings.Contains(k.stderr.String(), "rule objects loaded")
	})
	testcluster.Eventually(t, "/readyz to answer 200 with no rule object", func() bool {
		code, _ := testcluster.HTTPGet(t, "http://"+addr+"/readyz")
		return code == 200
	})
	applyObject(t, `apiVersion: kreact.dev/v1alpha1
kind: ClusterRule
metadata: {name: counted}
spec:
  watch: [{resource: configmaps, namespaces: [objready]}]
  script: |
    function onAdd(obj) {}
`)
	testcluster.Eventually(t, "kreact_rules_loaded to count the ClusterRule", func() bool {
		_, body := testcluster.HTTPGet(t, "http://"+addr+"/metrics")
		return strings.Contains(body, "\nkreact_rules_loaded 1\n")
	})
	// Its caches may still be filling: ready once they are.
	testcluster.Eventually(t, "/readyz to answer 200 with the ClusterRule synced", func() bool {
		code, _ := testcluster.HTTPGet(t, "http://"+addr+"/readyz")
		return code == 200
	})
}
