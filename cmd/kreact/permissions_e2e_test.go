//go:build e2e

package main

import (
	"path/filepath"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestPermissionsStayInTheWatchedNamespaces: a rule that watches only
// namespace a and may patch configmaps cannot patch kube-system/victim,
// neither through kreact's own check nor through the RBAC `kreact rbac`
// generates for it (a Role in a, no ClusterRole rule), on a real API
// server.
func TestPermissionsStayInTheWatchedNamespaces(t *testing.T) {
	ctx := t.Context()
	const ns, sa, a, victim = "kreact-perm-e2e", "kreact-perm", "perm-a-e2e", "kreact-perm-victim"
	createNamespace(t, ns)
	createNamespace(t, a)
	dyn := dynamicClient(t)
	cm := func(namespace, name string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": namespace}}}
	}
	if _, err := dyn.Resource(configMapsGVR).Namespace("kube-system").Create(ctx, cm("kube-system", victim), metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = dyn.Resource(configMapsGVR).Namespace("kube-system").Delete(t.Context(), victim, metav1.DeleteOptions{})
	})

	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "rule.yaml"), `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: reach
spec:
  watch:
    - resource: configmaps
      namespaces: [`+a+`]
  events: [add]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(cm, ctx) {
      if (cm.metadata.name !== "trigger") return;
      let refused = "no";
      try {
        kreact.patch({resource: "configmaps", namespace: "kube-system", name: "`+victim+`"},
          {metadata: {annotations: {"kreact.dev/reached": "true"}}});
      } catch (e) {
        kreact.log("refused", {error: String(e)});
        refused = "yes";
      }
      kreact.patch(cm, {metadata: {annotations: {"kreact.dev/seen": "true", "kreact.dev/refused": refused}}});
    }
`)
	code, manifests, stderr := run(t, "rbac", "-f", dir, "--name", sa, "--namespace", ns)
	if code != exitOK {
		t.Fatalf("kreact rbac: %s", transcript(code, manifests, stderr))
	}
	if strings.Contains(manifests, "kube-system") {
		t.Errorf("the generated RBAC names kube-system:\n%s", manifests)
	}
	applyManifests(t, manifests)
	saConfig := serviceAccountConfig(t, ns, sa)
	saClient := dynamic.NewForConfigOrDie(saConfig)
	patch := []byte(`{"metadata":{"annotations":{"kreact.dev/rbac-probe":"true"}}}`)

	// The RBAC: patching in a is allowed (once the authorizer knows the
	// Role), in kube-system forbidden.
	if _, err := dyn.Resource(configMapsGVR).Namespace(a).Create(ctx, cm(a, "probe"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the ServiceAccount to be allowed to patch in "+a, func() bool {
		_, err := saClient.Resource(configMapsGVR).Namespace(a).Patch(ctx, "probe", types.MergePatchType, patch, metav1.PatchOptions{})
		return err == nil
	})
	_, err := saClient.Resource(configMapsGVR).Namespace("kube-system").Patch(ctx, victim, types.MergePatchType, patch, metav1.PatchOptions{})
	if !apierrors.IsForbidden(err) {
		t.Errorf("patch kube-system/%s as the ServiceAccount: err = %v, want Forbidden", victim, err)
	}

	// kreact's own check, running as that ServiceAccount: the patch in
	// kube-system is refused before it reaches the API server, the one in
	// a goes through.
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", writeKubeconfig(t, saConfig))
	testcluster.Eventually(t, "kreact to sync its caches as the ServiceAccount", func() bool {
		return strings.Contains(c.stderr.String(), "caches synced")
	})
	if _, err := dyn.Resource(configMapsGVR).Namespace(a).Create(ctx, cm(a, "trigger"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the rule to patch the ConfigMap in "+a, func() bool {
		got, err := dyn.Resource(configMapsGVR).Namespace(a).Get(ctx, "trigger", metav1.GetOptions{})
		return err == nil && got.GetAnnotations()["kreact.dev/seen"] == "true"
	})
	if got, _ := dyn.Resource(configMapsGVR).Namespace(a).Get(ctx, "trigger", metav1.GetOptions{}); got.GetAnnotations()["kreact.dev/refused"] != "yes" {
		t.Errorf("the patch in kube-system did not throw in the script: annotations %v", got.GetAnnotations())
	}
	testcluster.Eventually(t, "kreact to refuse the patch in kube-system", func() bool {
		return strings.Contains(c.stderr.String(), `may not patch configmaps in namespace kube-system: its permission covers namespaces `+a)
	})
	if code := c.stop(); code != exitOK {
		t.Errorf("kreact run exited %d", code)
	}
	got, err := dyn.Resource(configMapsGVR).Namespace("kube-system").Get(ctx, victim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.GetAnnotations()) != 0 {
		t.Errorf("kube-system/%s was patched: annotations %v", victim, got.GetAnnotations())
	}
	if logs := c.stderr.String(); strings.Contains(strings.ToLower(logs), "forbidden") {
		t.Errorf("a patch reached the API server and was refused there, not by kreact:\n%s", logs)
	}
}
