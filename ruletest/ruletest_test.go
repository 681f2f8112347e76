package ruletest

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/linediff"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// durations are the only part of the report that changes from run to run.
var durations = regexp.MustCompile(`\((\d+(\.\d+)?(ns|µs|ms|s|m)|0s)\)`)

func normalizeReport(s string) string { return durations.ReplaceAllString(s, "(X)") }

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs (-want +got):\n%s", path, linediff.Marked(string(want), got))
	}
}

// report runs the test files and returns the report and summary.
func report(t *testing.T, opts Options, paths ...string) (string, Summary, error) {
	t.Helper()
	var out bytes.Buffer
	sum, err := Run(t.Context(), paths, &out, opts)
	return normalizeReport(out.String()), sum, err
}

func TestGoldenReports(t *testing.T) {
	tests := []struct {
		file         string
		failed, pass int
	}{
		{"pass.yaml", 0, 7},
		{"broken.yaml", 4, 0},
		{"script-error.yaml", 0, 3},
		{"tick.yaml", 0, 1},
		{"clock.yaml", 0, 4},
		{"schedule.yaml", 0, 2},
		{"runaway.yaml", 1, 0},
		{"projected.yaml", 1, 2},
		{"replica.yaml", 0, 2},
		{"condition.yaml", 1, 2},
		{"loose.yaml", 3, 3},
		{"once.yaml", 0, 2},
		{"admission.yaml", 1, 4},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, sum, err := report(t, Options{}, filepath.Join("testdata", tt.file))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			golden(t, strings.TrimSuffix(tt.file, ".yaml")+".golden", got)
			if sum.Failed != tt.failed || sum.Passed != tt.pass {
				t.Errorf("summary %+v, want %d passed and %d failed", sum, tt.pass, tt.failed)
			}
		})
	}
}

func TestVerboseReport(t *testing.T) {
	got, _, err := report(t, Options{Verbose: true}, "testdata/script-error.yaml")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "script-error.verbose.golden", got)
}

// --explain says why each rule stayed silent: a label value in another
// case, a misspelt namespace, an ignored path that swallowed the change;
// each with its position in the rule file and the fix.
func TestExplainReport(t *testing.T) {
	got, sum, err := report(t, Options{Explain: true}, "testdata/explain.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 3 {
		t.Errorf("summary %+v, want 3 failed", sum)
	}
	golden(t, "explain.golden", got)
	for _, want := range []string{
		`label values are case-sensitive: the object has app=Web, the selector wants app=web`,
		`namespace "team-a" is not in spec.watch[0].namespaces [teama] (testdata/rules/silent.yaml:27:19); "teama" looks like a misspelling of it`,
		`update: ignored: changed only ignored paths: metadata.annotations by spec.ignoreChanges[0] metadata (testdata/rules/silent.yaml:44:19)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	// Without --explain, nothing of it.
	plain, _, _ := report(t, Options{}, "testdata/explain.yaml")
	if strings.Contains(plain, "explain:") {
		t.Errorf("explained without Options.Explain:\n%s", plain)
	}
}

func TestInvalidFileReportsEveryProblem(t *testing.T) {
	for _, name := range []string{"invalid", "admission-invalid"} {
		_, _, err := report(t, Options{}, "testdata/"+name+".yaml")
		var list diag.ErrorList
		if !errors.As(err, &list) {
			t.Fatalf("Run: %v, want a diag.ErrorList", err)
		}
		golden(t, name+".golden", err.Error()+"\n")
	}
}

func TestUpdateRewritesFailingExpectations(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "testdata/broken.yaml", filepath.Join(dir, "broken.yaml"))
	for _, rule := range []string{"probe.yaml", "misbehaving.yaml"} {
		copyFile(t, filepath.Join("testdata/rules", rule), filepath.Join(dir, "rules", rule))
	}
	path := filepath.Join(dir, "broken.yaml")

	got, sum, err := report(t, Options{Update: true}, path)
	if err != nil {
		t.Fatal(err)
	}
	// Cases whose actions differ and nothing else are updated; the others
	// still fail (logs, errors, a missing object).
	if sum.Updated != 1 || sum.Failed != 3 {
		t.Errorf("summary %+v, want 1 updated and 3 failed\n%s", sum, got)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "broken.updated.golden", string(data))

	// The updated expectations hold: only the failures that are not about
	// actions remain.
	got, sum, err = report(t, Options{}, path)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Failed != 3 || strings.Contains(got, "actions differ") {
		t.Errorf("after --update: %+v\n%s", sum, got)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	data, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFiles(t *testing.T) {
	files, err := Files("testdata", "testdata/pass.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"testdata/admission-invalid.yaml", "testdata/admission.yaml", "testdata/broken.yaml", "testdata/clock.yaml", "testdata/condition.yaml", "testdata/explain.yaml", "testdata/invalid.yaml", "testdata/loose.yaml", "testdata/once.yaml", "testdata/pass.yaml", "testdata/projected.yaml", "testdata/replica.yaml", "testdata/runaway.yaml", "testdata/schedule.yaml", "testdata/script-error.yaml", "testdata/tick.yaml"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("Files = %q, want %q", files, want)
	}
	// A folder of rules finds the tests in its subfolders and skips the
	// rules, the CRDs and the fixtures.
	files, err = Files("../examples")
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"../examples/tests/backup-configmaps.yaml", "../examples/tests/namespace-defaults.yaml", "../examples/tests/notify-failures.yaml",
		"../examples/tests/restart-on-config-change.yaml", "../examples/tests/secret-sync.yaml", "../examples/tests/ttl-cleanup.yaml"}
	if strings.Join(files, " ") != strings.Join(want, " ") {
		t.Errorf("Files(../examples) = %q, want %q", files, want)
	}
	if _, err := Files("testdata/nope"); err == nil ||
		!strings.Contains(err.Error(), "testdata/nope: no such file or directory") {
		t.Errorf("Files of a missing path: %v", err)
	}
}

// A rule whose kreact.once it may not patch makes the test invalid, as
// kreact validate and kreact run refuse it, at the call.
func TestOnceWithoutPatchIsInvalid(t *testing.T) {
	dir := t.TempDir()
	rule := strings.Replace(mustRead(t, "testdata/rules/welcome.yaml"), "verbs: [patch, event]", "verbs: [event]", 1)
	if err := os.MkdirAll(filepath.Join(dir, "rules"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules", "welcome.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, "testdata/once.yaml", filepath.Join(dir, "once.yaml"))
	_, _, err := report(t, Options{}, filepath.Join(dir, "once.yaml"))
	want := filepath.Join(dir, "rules", "welcome.yaml") + `:16:12: kreact.once marks the object of its handler with a patch: rule "welcome" may not patch configmaps: add {resources: [configmaps], verbs: [patch]} to spec.permissions`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Run: %v\nwant %s", err, want)
	}
}

func mustRead(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
