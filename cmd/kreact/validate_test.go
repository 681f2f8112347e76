package main

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/diag"
)

// Offline, names resolve against the built-in resources and the --crd
// files; a CRD file with problems is invalid input.
func TestInputsResolve(t *testing.T) {
	r := cmdline.InputFlags{CRDs: []string{"../../examples/crds/backup.yaml"}}
	_, m, _, err := inputs(t.Context(), &r)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"deploy", "backups"} {
		if _, err := m.Resolve(name); err != nil {
			t.Errorf("Resolve(%s): %v", name, err)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	r.CRDs = []string{bad}
	var list diag.ErrorList
	if _, _, _, err := inputs(t.Context(), &r); cmdline.ExitCode(err, io.Discard) != exitInvalid || !errors.As(err, &list) {
		t.Errorf("inputs with a broken CRD file = %v, want invalid input, a diag.ErrorList", err)
	}
}
