//go:build e2e

package main

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

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
