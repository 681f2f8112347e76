//go:build e2e

package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/internal/testcluster"
)

func dynamicClient(t *testing.T) dynamic.Interface {
	t.Helper()
	return dynamic.NewForConfigOrDie(cluster.Config())
}

func typedClient(t *testing.T) kubernetes.Interface {
	t.Helper()
	return kubernetes.NewForConfigOrDie(cluster.Config())
}

var (
	namespacesGVR      = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapsGVR      = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	networkPoliciesGVR = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}
	// rbacKinds are the kinds `kreact rbac` prints.
	rbacKinds = map[string]schema.GroupVersionResource{
		"Namespace":          {Version: "v1", Resource: "namespaces"},
		"ServiceAccount":     {Version: "v1", Resource: "serviceaccounts"},
		"ClusterRole":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"},
		"ClusterRoleBinding": {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"},
		"Role":               {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"},
		"RoleBinding":        {Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"},
	}
)

func createNamespace(t *testing.T, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := dynamicClient(t).Resource(namespacesGVR).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

// applyManifests creates the objects of a multi-document YAML stream, in
// order, as `kubectl apply -f -` would (a Namespace that exists already
// is left as it is), and deletes the cluster-scoped ones it created when
// the test ends (the namespaced ones go with their namespace).
func applyManifests(t *testing.T, manifests string) {
	t.Helper()
	dyn := dynamicClient(t)
	for doc := range strings.SplitSeq(manifests, "\n---\n") {
		var obj map[string]any
		if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
			t.Fatalf("parse %q: %v", doc, err)
		}
		u := &unstructured.Unstructured{Object: obj}
		gvr, ok := rbacKinds[u.GetKind()]
		if !ok {
			t.Fatalf("unexpected kind %q in kreact rbac output", u.GetKind())
		}
		client := dyn.Resource(gvr)
		if ns := u.GetNamespace(); ns != "" {
			if _, err := dyn.Resource(gvr).Namespace(ns).Create(t.Context(), u, metav1.CreateOptions{}); err != nil {
				t.Fatalf("create %s %s/%s: %v", u.GetKind(), ns, u.GetName(), err)
			}
			continue
		}
		_, err := client.Create(t.Context(), u, metav1.CreateOptions{})
		if u.GetKind() == "Namespace" && apierrors.IsAlreadyExists(err) {
			continue
		}
		if err != nil {
			t.Fatalf("create %s %s: %v", u.GetKind(), u.GetName(), err)
		}
		t.Cleanup(func() { _ = client.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
	}
}

// serviceAccountConfig returns a client config that authenticates as the
// ServiceAccount with a token from the TokenRequest API.
func serviceAccountConfig(t *testing.T, namespace, name string) *rest.Config {
	t.Helper()
	expiry := int64(3600)
	tr, err := typedClient(t).CoreV1().ServiceAccounts(namespace).CreateToken(t.Context(), name,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token for %s/%s: %v", namespace, name, err)
	}
	admin := cluster.Config()
	return &rest.Config{Host: admin.Host, TLSClientConfig: rest.TLSClientConfig{CAData: admin.CAData}, BearerToken: tr.Status.Token}
}

// writeKubeconfig writes a kubeconfig file for cfg's server and token.
func writeKubeconfig(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "kubeconfig")
	kc := clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"e2e": {Server: cfg.Host, CertificateAuthorityData: cfg.CAData}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"e2e": {Token: cfg.BearerToken}},
		Contexts:       map[string]*clientcmdapi.Context{"e2e": {Cluster: "e2e", AuthInfo: "e2e"}},
		CurrentContext: "e2e",
	}
	if err := clientcmd.WriteToFile(kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServerSideApplyThatCreatesNeedsCreate settles what `kreact rbac`
// grants for kreact.apply: server-side apply is a PATCH request, but when
// it creates the object the API server also checks the create verb.
func TestServerSideApplyThatCreatesNeedsCreate(t *testing.T) {
	ctx := t.Context()
	const ns, sa = "kreact-ssa-probe", "applier"
	createNamespace(t, ns)
	kube := typedClient(t)
	if _, err := kube.CoreV1().ServiceAccounts(ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	role := &rbacv1.Role{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"patch"}}},
	}
	if _, err := kube.RbacV1().Roles(ns).Create(ctx, role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.RoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "configmaps"},
		RoleRef:    rbacv1.RoleRef{APIGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "configmaps"},
		Subjects:   []rbacv1.Subject{{Kind: "ServiceAccount", Name: sa, Namespace: ns}},
	}
	if _, err := kube.RbacV1().RoleBindings(ns).Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "existing"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	client := dynamic.NewForConfigOrDie(serviceAccountConfig(t, ns, sa)).Resource(configMapsGVR).Namespace(ns)
	configMap := func(name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": ns},
			"data":     map[string]any{"k": "v"},
		}}
	}
	apply := func(name string) error {
		_, err := client.Apply(ctx, name, configMap(name), metav1.ApplyOptions{FieldManager: "kreact", Force: true})
		return err
	}

	// The role takes effect once the authorizer's cache has it: then
	// patch alone applies to an object that exists...
	testcluster.Eventually(t, "server-side apply of an existing ConfigMap with patch", func() bool { return apply("existing") == nil })
	// ...and does not create one.
	err := apply("created")
	if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), `cannot create resource "configmaps"`) {
		t.Fatalf("server-side apply of a new ConfigMap with patch only: %v, want forbidden to create", err)
	}

	role.Rules[0].Verbs = []string{"create", "patch"}
	if _, err := kube.RbacV1().Roles(ns).Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "server-side apply of a new ConfigMap with create and patch", func() bool { return apply("created") == nil })
}

// TestRBACIsSufficientForExampleRules applies what `kreact rbac -f
// examples/` prints, its Namespace included, runs `kreact run` as that ServiceAccount and checks
// that the namespace-defaults rule's actions succeed, and that an action a
// rule did not declare is refused by kreact itself.
func TestRBACIsSufficientForExampleRules(t *testing.T) {
	ctx := t.Context()
	// The namespace does not exist: the output creates it first.
	const ns, sa = "kreact-rbac-e2e", "kreact-e2e"
	code, manifests, stderr := run(t, "rbac", "-f", "../../examples", "--crd", "../../examples/crds/backup.yaml", "--name", sa, "--namespace", ns)
	if code != exitOK {
		t.Fatalf("kreact rbac: %s", transcript(code, manifests, stderr))
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	kubeconfig := writeKubeconfig(t, saConfig)
	// The authorizer caches RBAC objects: wait until it knows the new
	// ClusterRole (all its rules come at once), so that kreact's first
	// lists are not refused for a moment.
	saClient := dynamic.NewForConfigOrDie(saConfig)
	testcluster.Eventually(t, "the ServiceAccount to be allowed to list namespaces", func() bool {
		_, err := saClient.Resource(namespacesGVR).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})

	extra := t.TempDir()
	writeFile(t, filepath.Join(extra, "undeclared.yaml"), `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: undeclared
spec:
  watch:
    - resource: namespaces
  events: [add]
  script: |
    function onAdd(ns, ctx) {
      if (ns.metadata.name === "team-rbac-e2e") {
        kreact.delete({resource: "configmaps", namespace: ns.metadata.name, name: "settings"});
      }
    }
`)
	c := startCLI(t, "run", "-f", "../../examples", "-f", extra, "--kubeconfig", kubeconfig)
	testcluster.Eventually(t, "kreact to sync its caches as the ServiceAccount", func() bool {
		return strings.Contains(c.stderr.String(), "caches synced")
	})

	const team = "team-rbac-e2e"
	createNamespace(t, team)
	dyn := dynamicClient(t)
	testcluster.Eventually(t, "namespace-defaults to label "+team, func() bool {
		got, err := dyn.Resource(namespacesGVR).Get(ctx, team, metav1.GetOptions{})
		return err == nil && got.GetLabels()["kreact.dev/managed"] == "true" && got.GetLabels()["team"] == "unassigned"
	})
	testcluster.Eventually(t, "namespace-defaults to apply the NetworkPolicy in "+team, func() bool {
		_, err := dyn.Resource(networkPoliciesGVR).Namespace(team).Get(ctx, "default-deny-ingress", metav1.GetOptions{})
		return err == nil
	})
	testcluster.Eventually(t, "kreact to refuse the undeclared delete", func() bool {
		return strings.Contains(c.stderr.String(), `rule \"undeclared\" may not delete configmaps: add {resources: [configmaps], verbs: [delete]} to spec.permissions`)
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	checkRBACSufficient(t, c.stderr.String())
}

// TestRBACIsSufficientForShards runs kreact run --shards as the
// ServiceAccount that `kreact rbac --shards` prints: it joins the group
// with its Lease, reacts, and deletes its Lease when it stops, with no
// request refused.
func TestRBACIsSufficientForShards(t *testing.T) {
	ctx := t.Context()
	const ns, sa = "kreact-rbac-shards", "kreact-shards-e2e"
	createNamespace(t, ns)
	dir := t.TempDir()
	writeRule(t, dir, "labeller.yaml", labeller(ns, "sharded"))
	code, manifests, stderr := run(t, "rbac", "-f", dir, "--name", sa, "--namespace", ns, "--shards")
	if code != exitOK {
		t.Fatalf("kreact rbac: %s", transcript(code, manifests, stderr))
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	saClient := kubernetes.NewForConfigOrDie(saConfig)
	testcluster.Eventually(t, "the ServiceAccount to be allowed to list Leases", func() bool {
		_, err := saClient.CoordinationV1().Leases(ns).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})

	c := startCLI(t, "run", "-f", dir, "--kubeconfig", writeKubeconfig(t, saConfig),
		"--shards", "--shard-namespace", ns, "--shard-identity", "only", "--shard-lease-duration", "6s", "--shard-renew-period", "500ms")
	testcluster.Eventually(t, "kreact to run sharded as the ServiceAccount", func() bool {
		return strings.Contains(c.stderr.String(), "kreact is running")
	})
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "sharded", Namespace: ns}}
	if _, err := typedClient(t).CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the labeller to react", func() bool {
		got, err := typedClient(t).CoreV1().ConfigMaps(ns).Get(ctx, "sharded", metav1.GetOptions{})
		return err == nil && got.Labels["version"] == "sharded"
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	logs := c.stderr.String()
	if !strings.Contains(logs, "left the shard group") {
		t.Errorf("kreact did not delete its Lease when it stopped")
	}
	checkRBACSufficient(t, logs)
	if _, err := typedClient(t).CoordinationV1().Leases(ns).Get(ctx, "kreact-only", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Lease is left after kreact stopped: %v", err)
	}
}

// TestRBACIsSufficientForAdmission runs kreact run as the ServiceAccount
// that `kreact rbac --admission-ca-secret` prints for a rule with an
// admission handler: it creates the CA Secret, applies the webhook
// configurations, answers the API server, and deletes the configurations
// when the rule goes, with no request refused.
func TestRBACIsSufficientForAdmission(t *testing.T) {
	ctx := t.Context()
	const ns, sa, name = "kreact-rbac-adm", "kreact-adm-e2e", "kreact-rbac-adm"
	dyn := dynamicClient(t)
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{validatingConfigsGVR, mutatingConfigsGVR} {
			_ = dyn.Resource(gvr).Delete(context.Background(), name, metav1.DeleteOptions{})
		}
	})
	dir := t.TempDir()
	writeRule(t, dir, "defaults.yaml", admissionRule("rbac-defaults", "namespaces", "", "rbac-adm-e2e=yes", "  events: [add]\n  reads: [configmaps]\n",
		`function onMutate(req, ctx) {
  if (kreact.list("configmaps", {namespace: "default"}).length >= 0) return {metadata: {labels: {team: "unassigned"}}};
}`))
	code, manifests, stderr := run(t, "rbac", "-f", dir, "--name", sa, "--namespace", ns, "--admission-ca-secret", "admission-ca")
	if code != exitOK {
		t.Fatalf("kreact rbac: %s", transcript(code, manifests, stderr))
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	saClient := dynamic.NewForConfigOrDie(saConfig)
	testcluster.Eventually(t, "the ServiceAccount to be allowed to read the CA Secret", func() bool {
		_, err := saClient.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}).Namespace(ns).Get(ctx, "admission-ca", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})

	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", writeKubeconfig(t, saConfig), "--reload-interval", "200ms",
		"--admission-bind-address", addr, "--admission-url", "https://"+addr, "--admission-name", name,
		"--admission-namespace", ns, "--admission-ca-secret", "admission-ca")
	i := 0
	testcluster.Eventually(t, "a Namespace to be labelled at its creation", func() bool {
		i++
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": "rbac-adm-" + strconv.Itoa(i), "labels": map[string]any{"rbac-adm-e2e": "yes"}}}}
		created, err := dyn.Resource(namespacesGVR).Create(ctx, obj, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return created.GetLabels()["team"] == "unassigned"
	})
	if err := os.Remove(filepath.Join(dir, "defaults.yaml")); err != nil {
		t.Fatal(err)
	}
	writeRule(t, dir, "plain.yaml", admissionRule("plain", "namespaces", "", "", "  events: [add]\n", `function onAdd(obj, ctx) {}`))
	testcluster.Eventually(t, "the configurations to be deleted with the rule", func() bool {
		_, err := dyn.Resource(mutatingConfigsGVR).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	checkRBACSufficient(t, c.stderr.String())
}

// TestRBACIsSufficientForOwnerReferences runs, as the ServiceAccount that
// `kreact rbac` prints, a rule that creates a ConfigMap owned by the one
// it watches, on a server with OwnerReferencesPermissionEnforcement (see
// TestMain): the owner reference's blockOwnerDeletion needs update on the
// owner's finalizers, which the generated Role grants.
func TestRBACIsSufficientForOwnerReferences(t *testing.T) {
	ctx := t.Context()
	const ns, sa, watched = "kreact-owner-e2e", "kreact-owner", "owner-e2e-watched"
	createNamespace(t, watched)
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "child.yaml"), `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: child
spec:
  watch:
    - resource: configmaps
      namespaces: [`+watched+`]
  events: [add]
  permissions:
    - resources: [configmaps]
      verbs: [create]
  script: |
    function onAdd(obj) {
      if (obj.metadata.name !== "parent") return;
      kreact.create({apiVersion: "v1", kind: "ConfigMap",
        metadata: {name: "child", namespace: obj.metadata.namespace}, data: {from: "parent"}}, {owner: obj});
    }
`)
	code, manifests, stderr := run(t, "rbac", "-f", dir, "--name", sa, "--namespace", ns)
	if code != exitOK {
		t.Fatalf("kreact rbac: %s", transcript(code, manifests, stderr))
	}
	if !strings.Contains(manifests, "resources: [configmaps/finalizers]") {
		t.Fatalf("kreact rbac grants no update on configmaps/finalizers:\n%s", manifests)
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	saClient := dynamic.NewForConfigOrDie(saConfig)
	testcluster.Eventually(t, "the ServiceAccount to be allowed to list configmaps in "+watched, func() bool {
		_, err := saClient.Resource(configMapsGVR).Namespace(watched).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", writeKubeconfig(t, saConfig))
	testcluster.Eventually(t, "kreact to sync its caches as the ServiceAccount", func() bool {
		return strings.Contains(c.stderr.String(), "caches synced")
	})

	configMaps := dynamicClient(t).Resource(configMapsGVR).Namespace(watched)
	parent := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "parent", "namespace": watched}}}
	created, err := configMaps.Create(ctx, parent, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the rule to create the child owned by its parent", func() bool {
		child, err := configMaps.Get(ctx, "child", metav1.GetOptions{})
		if err != nil {
			return false
		}
		refs := child.GetOwnerReferences()
		return len(refs) == 1 && refs[0].UID == created.GetUID() && refs[0].BlockOwnerDeletion != nil && *refs[0].BlockOwnerDeletion
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	checkRBACSufficient(t, c.stderr.String())
}

// checkRBACSufficient fails the test if kreact, run as the ServiceAccount
// that kreact rbac printed, logged a request the API server refused.
func checkRBACSufficient(t *testing.T, logs string) {
	t.Helper()
	if strings.Contains(strings.ToLower(logs), "forbidden") {
		t.Errorf("the generated RBAC is not sufficient: kreact got 403s:\n%s", logs)
	}
	// kreact's own check at load asks for what kreact rbac grants
	// (rbac.Needs): it finds nothing missing either.
	if strings.Contains(logs, "rule lacks permissions") {
		t.Errorf("kreact's check at load found the generated RBAC short:\n%s", logs)
	}
}

// TestRBACIsSufficientForConditions: `kreact rbac`, resolving against the
// cluster's discovery, grants a condition get and patch on widgets/status,
// whose CRD has a status subresource, and on gadgets themselves, whose CRD
// has none (and nothing on a gadgets/status that does not exist); kreact
// run, as the ServiceAccount it prints, then sets a condition on each with
// no request refused. The rule watches ConfigMaps, not the custom
// resources, so that what the condition reads is read through the grant
// of condition alone.
func TestRBACIsSufficientForConditions(t *testing.T) {
	ctx := t.Context()
	const ns, sa, watched = "kreact-conditions-e2e", "kreact-conditions", "conditions-e2e-watched"
	dyn := dynamicClient(t)
	widgets := testcluster.CRD{Group: "conditions.kreact.test", Kind: "Widget", Plural: "widgets"}
	gadgets := testcluster.CRD{Group: "conditions.kreact.test", Kind: "Gadget", Plural: "gadgets", NoStatus: true}
	createNamespace(t, watched)
	for _, crd := range []testcluster.CRD{widgets, gadgets} {
		if err := testcluster.CreateCRD(ctx, dyn, crd); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), dyn, crd) })
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": crd.Group + "/v1", "kind": crd.Kind,
			"metadata": map[string]any{"name": "one", "namespace": watched},
		}}
		if _, err := dyn.Resource(crd.GVR()).Namespace(watched).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "ready.yaml"), `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ready
spec:
  watch:
    - resource: configmaps
      namespaces: [`+watched+`]
  events: [add]
  permissions:
    - resources: [widgets.conditions.kreact.test]
      verbs: [condition]
    - resources: [gadgets.conditions.kreact.test]
      verbs: [condition, patch]
  script: |
    function onAdd(cm) {
      for (const resource of ["widgets.conditions.kreact.test", "gadgets.conditions.kreact.test"]) {
        kreact.setCondition({resource, namespace: cm.metadata.namespace, name: cm.metadata.name},
          {type: "Ready", status: "True", reason: "Seen"});
      }
    }
`)
	var manifests string
	testcluster.Eventually(t, "kreact rbac to resolve the CRDs through discovery", func() bool {
		code, stdout, _ := run(t, "rbac", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--name", sa, "--namespace", ns)
		manifests = stdout
		return code == exitOK
	})
	for _, want := range []string{
		"# rule ready (condition)\n  - apiGroups: [conditions.kreact.test]\n    resources: [widgets/status]\n    verbs: [get, patch]\n",
		"# rule ready (condition, patch)\n  - apiGroups: [conditions.kreact.test]\n    resources: [gadgets]\n    verbs: [get, patch]\n",
	} {
		if !strings.Contains(manifests, want) {
			t.Errorf("kreact rbac does not grant\n%s\nin\n%s", want, manifests)
		}
	}
	if strings.Contains(manifests, "gadgets/status") || strings.Contains(manifests, "resources: [widgets]") {
		t.Errorf("kreact rbac grants gadgets/status, which does not exist, or something on widgets themselves:\n%s", manifests)
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	saClient := dynamic.NewForConfigOrDie(saConfig)
	testcluster.Eventually(t, "the ServiceAccount to be allowed to list configmaps in "+watched, func() bool {
		_, err := saClient.Resource(configMapsGVR).Namespace(watched).List(ctx, metav1.ListOptions{Limit: 1})
		return err == nil
	})
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", writeKubeconfig(t, saConfig))
	testcluster.Eventually(t, "kreact to sync its caches as the ServiceAccount", func() bool {
		return strings.Contains(c.stderr.String(), "caches synced")
	})
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "one", "namespace": watched}}}
	if _, err := dyn.Resource(configMapsGVR).Namespace(watched).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, crd := range []testcluster.CRD{widgets, gadgets} {
		testcluster.Eventually(t, "the rule to set the condition of the "+crd.Kind, func() bool {
			obj, err := dyn.Resource(crd.GVR()).Namespace(watched).Get(ctx, "one", metav1.GetOptions{})
			if err != nil {
				return false
			}
			conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
			return len(conditions) == 1 && conditions[0].(map[string]any)["reason"] == "Seen"
		})
	}
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	checkRBACSufficient(t, c.stderr.String())
}
