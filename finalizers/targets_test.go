package finalizers

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/restmapper"
)

func builtinMapper() *restmapper.Mapper {
	return restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{})
}

// Each resource is scanned once whatever it is called; namespaced ones in
// the namespace asked for, cluster-scoped ones everywhere.
func TestTargets(t *testing.T) {
	targets, err := Targets(builtinMapper(), []string{"secrets", "secret", "namespaces", "cm"}, "team-a")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, tg := range targets {
		if tg.LabelSelector != "" {
			t.Errorf("%s has selector %q; want none", tg.Resource.GVR, tg.LabelSelector)
		}
		got = append(got, tg.Resource.GVR.Resource+"@"+tg.Namespace)
	}
	if want := []string{"secrets@team-a", "namespaces@", "configmaps@team-a"}; !slices.Equal(got, want) {
		t.Errorf("targets = %q, want %q", got, want)
	}
}

func TestTargetsReportsEveryUnknownName(t *testing.T) {
	targets, err := Targets(builtinMapper(), []string{"secrts", "configmaps", "bk"}, "")
	if err == nil || targets != nil {
		t.Fatalf("Targets = %v, %v; want no targets and an error", targets, err)
	}
	for _, want := range []string{`"secrts": no such resource; did you mean "secrets"?`, `"bk": no such resource`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %s", err, want)
		}
	}
}

const ruleFile = `apiVersion: kreact.dev/v1alpha1
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

func writeRule(t *testing.T, dir, file, name string) {
	t.Helper()
	data := strings.ReplaceAll(ruleFile, "%s", name)
	if err := os.WriteFile(filepath.Join(dir, file), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWatched(t *testing.T) {
	dir := t.TempDir()
	writeRule(t, dir, "a.yaml", "secret-sync")
	writeRule(t, dir, "b.yaml", "other")
	if err := os.WriteFile(filepath.Join(dir, "broken.yaml"), []byte("kind: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A broken file elsewhere does not hide the rule.
	refs, err := Watched("secret-sync", []string{dir})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"secrets", "deploy"}; !slices.Equal(refs, want) {
		t.Errorf("Watched = %q, want %q", refs, want)
	}
	// An unknown rule names the rules there, and the file that did not load.
	_, err = Watched("nope", []string{dir})
	if err == nil {
		t.Fatal("Watched(nope) found a rule")
	}
	msg := err.Error()
	if !strings.Contains(msg, `no rule "nope" in `+dir+" (rules there: secret-sync, other)") {
		t.Errorf("error %q does not name the rules found", msg)
	}
	if !strings.Contains(msg, "broken.yaml") {
		t.Errorf("error %q does not report broken.yaml", msg)
	}
}
