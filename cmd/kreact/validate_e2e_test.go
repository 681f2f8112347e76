//go:build e2e

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestValidateAgainstCluster resolves names with the cluster's discovery:
// a custom resource is unknown until its CRD is installed.
func TestValidateAgainstCluster(t *testing.T) {
	dir := t.TempDir()
	rule := filepath.Join(dir, "gadgets.yaml")
	writeFile(t, rule, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: gadgets
spec:
  watch:
    - resource: gdg
  events: [add]
  permissions:
    - resources: [gadgets.validate.kreact.dev]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {}
`)
	args := []string{"validate", "-f", rule, "--kubeconfig", cluster.KubeconfigPath()}
	code, _, stderr := run(t, args...)
	if code != exitInvalid || !strings.Contains(stderr, `gadgets.yaml:7:17: spec.watch[0].resource: "gdg": no such resource`) {
		t.Fatalf("before the CRD exists: exit %d\n%s", code, stderr)
	}
	if strings.Contains(stderr, "hint:") {
		t.Errorf("the --crd hint is for offline use only:\n%s", stderr)
	}

	dyn := dynamicClient(t)
	crd := testcluster.CRD{Group: "validate.kreact.dev", Kind: "Gadget", Plural: "gadgets", ShortNames: []string{"gdg"}}
	if err := testcluster.CreateCRD(t.Context(), dyn, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), dyn, crd) })
	code, stdout, stderr := run(t, args...)
	if code != exitOK || stdout != "ok: 1 rule in 1 file\n" {
		t.Errorf("after the CRD exists: %s", transcript(code, stdout, stderr))
	}
}

// TestValidateHintsFromCluster: against a cluster, validate warns, with
// positions, about a namespace that does not exist and a selector that
// matches nothing, the silent mistakes of a rule that loads fine.
func TestValidateHintsFromCluster(t *testing.T) {
	const ns = "validate-hints"
	dyn := dynamicClient(t)
	ensureNamespace(t, dyn, ns)
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": ns, "labels": map[string]any{"app": "Web"}}}}
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	rule := filepath.Join(dir, "silent.yaml")
	writeFile(t, rule, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: silent
spec:
  watch:
    - resource: configmaps
      namespaces: [validatehints]
    - resource: secrets
      namespaces: [validate-hints]
    - resource: configmaps
      namespaces: [validate-hints]
      labelSelector: app=web
  events: [add]
  script: |
    function onAdd(obj, ctx) {}
`)
	args := []string{"validate", "-f", rule, "--kubeconfig", cluster.KubeconfigPath()}
	code, stdout, stderr := run(t, args...)
	for _, want := range []string{
		rule + `:8:19: warning: rule "silent": spec.watch[0].namespaces: namespace "validatehints" does not exist on the cluster, so the rule sees nothing there (did you mean "validate-hints"?)`,
		rule + `:13:22: warning: rule "silent": spec.watch[2].labelSelector: "app=web" matches no configmaps in namespaces validate-hints (yet); label values are case-sensitive, and the cluster has app=Web`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("validate lacks %q", want)
		}
	}
	if code != exitOK || stdout != "ok: 1 rule in 1 file, 2 warnings\n" || t.Failed() {
		t.Errorf("%s", transcript(code, stdout, stderr))
	}
}
