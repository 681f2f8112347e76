//go:build e2e

package main

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

var rulesGVR = schema.GroupVersionResource{Group: "kreact.dev", Version: "v1alpha1", Resource: "rules"}

// brokenRuleObject is a team's Rule that the CRDs' schema admits, and
// kreact validate does not: its script does not parse, and it watches a
// resource that no cluster serves.
const brokenRuleObject = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: broken
  namespace: objcheck-a
spec:
  watch:
    - resource: confgimaps
  script: |
    function onAdd(obj) {
      kreact.log("added" obj.metadata.name);
    }
`

// TestRuleObjectsAreCheckedAtApply: with --admission-validate-rules,
// kubectl apply of a broken Rule is refused by the API server with every
// error kreact validate finds, at its field and script position; a good
// one is stored; a team's Rule that reaches another namespace is refused
// saying why; and with kreact stopped, the webhook's failure policy
// (Ignore) leaves the objects to the CRDs' schema.
func TestRuleObjectsAreCheckedAtApply(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	const name = "kreact-objcheck-e2e"
	t.Cleanup(func() {
		// The configuration outlives kreact by design; other tests must
		// not meet it.
		if err := dyn.Resource(validatingConfigsGVR).Delete(context.Background(), name+"-rule-objects", metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("delete the configuration: %v", err)
		}
	})
	if out, err := kubectlE2E(t, "", "apply", "--server-side", "-f", "../../deploy/crds"); err != nil {
		t.Fatalf("apply the rule CRDs: %v\n%s", err, out)
	}
	if out, err := kubectlE2E(t, "", "wait", "--for", "condition=Established", "crd/rules.kreact.dev", "crd/clusterrules.kreact.dev"); err != nil {
		t.Fatalf("wait for the rule CRDs: %v\n%s", err, out)
	}
	ensureNamespace(t, dyn, "objcheck-a")
	ensureNamespace(t, dyn, "objcheck-b")
	t.Cleanup(func() {
		// A kreact that loads rule objects in another test must not meet
		// these.
		if err := dyn.Resource(rulesGVR).Namespace("objcheck-a").DeleteCollection(context.Background(), metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
			t.Errorf("delete the Rules: %v", err)
		}
	})

	dir := t.TempDir()
	writeRule(t, dir, "idle.yaml", "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: idle}\nspec:\n  watch: [{resource: configmaps, namespaces: [objcheck-b]}]\n  events: [add]\n  script: |\n    function onAdd(obj) {}\n")
	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(),
		"--admission-bind-address", addr, "--admission-url", "https://"+addr, "--admission-name", name,
		"--admission-namespace", "kreact-objcheck-e2e", "--admission-validate-rules", "--metrics-bind-address", testcluster.FreeAddr(t),
		"--health-probe-bind-address", testcluster.FreeAddr(t))
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	testcluster.Eventually(t, "the webhook configuration of rule objects to be applied", func() bool {
		_, err := dyn.Resource(validatingConfigsGVR).Get(t.Context(), name+"-rule-objects", metav1.GetOptions{})
		return err == nil
	})

	// The API server picks configurations up from a watch: the first
	// requests may miss it (and a broken Rule that got through is
	// deleted to try again).
	var out string
	testcluster.Eventually(t, "kubectl apply of a broken Rule to be refused", func() bool {
		var err error
		out, err = kubectlE2E(t, brokenRuleObject, "apply", "-f", "-")
		if err == nil {
			_, _ = kubectlE2E(t, "", "delete", "rule", "broken", "-n", "objcheck-a")
		}
		return strings.Contains(out, "denied the request")
	})
	for _, want := range []string{
		`admission webhook "rules.kreact.dev" denied the request: 3 errors (kreact validate):`,
		"\nrule/objcheck-a/broken: spec.watch[0].resource: \"confgimaps\": no such resource; did you mean \"configmaps\"?\n",
		"\nrule/objcheck-a/broken: spec.script:2:22: rule \"objcheck-a.broken\": script: Unexpected identifier\n",
		"\nrule/objcheck-a/broken: spec.script:2:39: rule \"objcheck-a.broken\": script: Unexpected token )",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply of a broken Rule:\n%s\nwant it to say\n%s", out, want)
		}
	}
	if _, err := dyn.Resource(rulesGVR).Namespace("objcheck-a").Get(t.Context(), "broken", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused Rule exists: %v", err)
	}

	// Mended, it is stored.
	good := strings.NewReplacer("confgimaps", "configmaps", `"added" obj`, `"added", obj`).Replace(brokenRuleObject)
	if out, err := kubectlE2E(t, good, "apply", "-f", "-"); err != nil {
		t.Errorf("kubectl apply of a good Rule: %v\n%s", err, out)
	}
	if _, err := dyn.Resource(rulesGVR).Namespace("objcheck-a").Get(t.Context(), "broken", metav1.GetOptions{}); err != nil {
		t.Errorf("the good Rule: %v", err)
	}

	// A team's Rule acts in its own namespace only.
	reaching := strings.Replace(good, "  script: |", "  permissions:\n    - resources: [configmaps]\n      verbs: [delete]\n      namespaces: [objcheck-b]\n  script: |", 1)
	reaching = strings.Replace(reaching, "name: broken", "name: reaching", 1)
	out, err := kubectlE2E(t, reaching, "apply", "-f", "-")
	want := `rule/objcheck-a/reaching: spec.permissions[0].namespaces: "objcheck-b" is outside namespace objcheck-a: a Rule acts in its own namespace only (a ClusterRule may reach others)`
	if err == nil || !strings.Contains(out, want) {
		t.Errorf("kubectl apply of a Rule that reaches another namespace: %v\n%s\nwant it refused saying\n%s", err, out, want)
	}

	// With kreact down, the configuration stays and lets applies
	// through: the schema alone checks them.
	if code := c.stop(); code != 0 {
		t.Fatalf("kreact run exited %d", code)
	}
	if out, err := kubectlE2E(t, strings.Replace(brokenRuleObject, "name: broken", "name: unchecked", 1), "apply", "-f", "-"); err != nil {
		t.Errorf("kubectl apply with kreact down: %v\n%s", err, out)
	}
	if out, err := kubectlE2E(t, strings.Replace(brokenRuleObject, "  script: |", "  workers: 0\n  script: |", 1), "apply", "-f", "-"); err == nil || !strings.Contains(out, "spec.workers") {
		t.Errorf("kubectl apply of what the schema refuses, with kreact down: %v\n%s", err, out)
	}
}
