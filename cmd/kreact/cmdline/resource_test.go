package cmdline

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreact/kreact/diag"
)

// Offline, names resolve against the built-in resources and the --crd
// files; a CRD file with problems is a diag.ErrorList.
func TestResourceFlagsMapper(t *testing.T) {
	var r ResourceFlags
	fs := NewFlagSet("validate", "", "")
	r.Register(fs)
	if err := fs.Parse([]string{"--crd", "../../../examples/crds/backup.yaml"}); err != nil {
		t.Fatal(err)
	}
	if r.Live() {
		t.Error("Live without --kubeconfig or --context")
	}
	m, err := r.Mapper(t.Context(), "kreact/test")
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
	if _, err := r.Mapper(t.Context(), "kreact/test"); !errors.As(err, &list) {
		t.Errorf("Mapper with a broken CRD file = %v, want a diag.ErrorList", err)
	}
	r.Cluster.Context = "elsewhere"
	if !r.Live() {
		t.Error("not Live with --context")
	}
}
