//go:build e2e

package validate_test

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/validate"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// TestReaderLooksAResourceUpAgain: a rule naming a CRD created after the
// stack's discovery, whose name is close to a known one's (configmapz,
// configmaps), is read as a rule that runs, not as a typo: Reader asks
// discovery again before it calls a name misspelt.
func TestReaderLooksAResourceUpAgain(t *testing.T) {
	stack, err := clientstack.New(t.Context(), cluster.Config(), clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	crd := testcluster.CRD{Group: "reader.kreact.dev", Kind: "Configmapz", Plural: "configmapz"}
	if err := testcluster.CreateCRD(t.Context(), stack.Client, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), stack.Client, crd) })
	dir := t.TempDir()
	path := filepath.Join(dir, "rule.yaml")
	if err := os.WriteFile(path, []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: z
spec:
  watch:
  - resource: configmapz
  script: |
    function onAdd(obj) {}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := validate.Reader(stack, validate.Options{})(t.Context(), "test: loading rules", []string{path})
	if err != nil || files.Err != nil || len(files.Rules) != 1 || files.Since == "" {
		t.Fatalf("Reader = %+v, %v; want the rule, with no error, and the files' fingerprint", files, err)
	}
}
