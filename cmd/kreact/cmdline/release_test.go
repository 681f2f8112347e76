package cmdline

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// kreact finalizers release scans the resources named, or those the rule
// watches in the files of -f; a rule that is not there is invalid input.
func TestReleaseOptionsResources(t *testing.T) {
	o := ReleaseOptions{Rule: "secret-sync", Refs: []string{"secrets"}}
	if refs, err := o.Resources(); err != nil || strings.Join(refs, ",") != "secrets" {
		t.Errorf("Resources of the resources named = %v, %v", refs, err)
	}
	dir := t.TempDir()
	rule := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: secret-sync}\nspec:\n  finalizer: true\n  watch: [{resource: secrets}, {resource: configmaps}]\n  script: 'function onAdd() {}'\n"
	if err := os.WriteFile(filepath.Join(dir, "r.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	o = ReleaseOptions{Rule: "secret-sync", Files: []string{dir}}
	if refs, err := o.Resources(); err != nil || strings.Join(refs, ",") != "secrets,configmaps" {
		t.Errorf("Resources of -f = %v, %v; want what the rule watches", refs, err)
	}
	o.Rule = "other"
	if _, err := o.Resources(); ExitCode(err, io.Discard) != ExitInvalid {
		t.Errorf("Resources of a rule not in the files = %v, want invalid input", err)
	}
}
