package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const finalizerRuleFile = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: secrets
    - resource: deploy
  finalizer: true
  script: |
    function onDelete(obj, ctx) {}
`

func writeFinalizerRule(t *testing.T, dir, file, name string) {
	t.Helper()
	data := strings.ReplaceAll(finalizerRuleFile, "%s", name)
	if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeFinalizerRule(t, dir, "a.yaml", "secret-sync")
	writeFinalizerRule(t, dir, "b.yaml", "other")
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A broken file elsewhere does not hide the rule.
	r, err := Find("secret-sync", dir)
	if err != nil {
		t.Fatal(err)
	}
	var refs []string
	for _, w := range r.Watch {
		refs = append(refs, w.Resource)
	}
	if want := []string{"secrets", "deploy"}; !slices.Equal(refs, want) {
		t.Errorf("Find watches %q, want %q", refs, want)
	}
	// An unknown rule names the rules there, and the file that did not load.
	_, err = Find("nope", dir)
	if err == nil {
		t.Fatal("Find(nope) found a rule")
	}
	msg := err.Error()
	if !strings.Contains(msg, `no rule "nope" in `+dir+" (rules there: secret-sync, other)") {
		t.Errorf("error %q does not name the rules found", msg)
	}
	if !strings.Contains(msg, "broken.yaml") {
		t.Errorf("error %q does not report broken.yaml", msg)
	}
}
