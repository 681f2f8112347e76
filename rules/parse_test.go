package rules

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

var update = flag.Bool("update", false, "rewrite the .golden files in testdata/invalid")

// TestInvalidGolden parses every file in testdata/invalid and compares the
// complete error output with the file's .golden twin.
func TestInvalidGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no test files")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			rules, err := ParseFile(file)
			if err == nil {
				t.Fatalf("ParseFile(%s) succeeded with %d rules, want errors", file, len(rules))
			}
			if rules != nil {
				t.Errorf("ParseFile returned %d rules with an error, want nil", len(rules))
			}
			var list diag.ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("error is %T, want diag.ErrorList", err)
			}
			for _, e := range list {
				if e.Pos.File != file || e.Pos.Line < 1 {
					t.Errorf("error without a position in %s: %v", file, e)
				}
			}
			got := err.Error() + "\n"
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestInvalidGolden -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("errors differ from %s (run with -update to accept)\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// defaultAdmission is spec.admission left out.
var defaultAdmission = Admission{FailurePolicy: FailIgnore, Timeout: DefaultAdmissionTimeout, Mode: AdmissionEnforce}

func TestParseValid(t *testing.T) {
	tests := []struct {
		file string
		want []*Rule
	}{
		{
			file: "testdata/valid/full.yaml",
			want: []*Rule{{
				Name:        "restart-on-config-change",
				Description: "Restart Deployments when a ConfigMap they mount changes.",
				Pos:         diag.Position{File: "testdata/valid/full.yaml", Line: 5, Col: 9},
				Watch: []Watch{{
					Resource:         "configmaps",
					Namespaces:       []string{"default", "prod"},
					LabelSelector:    "app in (web,api)",
					FieldSelector:    "metadata.name!=kube-root-ca.crt",
					Fields:           []FieldPath{{"data"}, {"binaryData"}},
					FieldsSet:        true,
					Pos:              diag.Position{File: "testdata/valid/full.yaml", Line: 9, Col: 17},
					FieldsPos:        diag.Position{File: "testdata/valid/full.yaml", Line: 13, Col: 15},
					NamespacesPos:    diag.Position{File: "testdata/valid/full.yaml", Line: 10, Col: 19},
					LabelSelectorPos: diag.Position{File: "testdata/valid/full.yaml", Line: 11, Col: 22},
					FieldSelectorPos: diag.Position{File: "testdata/valid/full.yaml", Line: 12, Col: 22},
				}},
				Events:    []event.Type{event.Add, event.Update},
				EventsPos: diag.Position{File: "testdata/valid/full.yaml", Line: 14, Col: 11},
				IgnoreChanges: []FieldPath{
					{"status"},
					{"metadata", "annotations", "example.com/last-seen"},
				},
				IgnoreChangesPos: []diag.Position{
					{File: "testdata/valid/full.yaml", Line: 16, Col: 7},
					{File: "testdata/valid/full.yaml", Line: 17, Col: 7},
				},
				Reads: []Ref{{"deployments.apps", diag.Position{File: "testdata/valid/full.yaml", Line: 18, Col: 11}}},
				Permissions: []Permission{{
					Resources: []Ref{{"deployments.apps", diag.Position{File: "testdata/valid/full.yaml", Line: 20, Col: 19}}},
					Verbs:     []actions.Verb{actions.Patch, actions.Event},
					Pos:       diag.Position{File: "testdata/valid/full.yaml", Line: 20, Col: 7},
				}},
				HTTP: []string{"http://127.0.0.1:9999/hooks/"},
				Script: `function onUpdate(oldObj, obj, ctx) {
  for (const d of kreact.list("deployments.apps", obj.metadata.namespace)) {
    ctx.log("would restart " + d.metadata.name);
  }
}
`,
				ScriptLang:    ScriptJavaScript,
				ScriptPos:     diag.Position{File: "testdata/valid/full.yaml", Line: 25, Col: 5},
				Workers:       2,
				Admission:     defaultAdmission,
				Timeout:       500 * time.Millisecond,
				Retries:       0,
				MaxActions:    200,
				MemoryLimit:   128 << 20,
				ActionWorkers: 4,
				Delivery:      DeliverEvery,
				RateLimit:     2.5,
				Burst:         3,
				DryRun:        true,
				Source:        "testdata/valid/full.yaml",
			}},
		},
		{
			file: "testdata/valid/minimal.yaml",
			want: []*Rule{{
				Name:          "log-pods",
				Pos:           diag.Position{File: "testdata/valid/minimal.yaml", Line: 4, Col: 9},
				Watch:         []Watch{{Resource: "pods", Pos: diag.Position{File: "testdata/valid/minimal.yaml", Line: 7, Col: 17}}},
				Events:        []event.Type{event.Add, event.Update, event.Delete},
				Script:        "function onAdd(obj, ctx) { ctx.log(obj.metadata.name) }",
				ScriptLang:    ScriptJavaScript,
				ScriptPos:     diag.Position{File: "testdata/valid/minimal.yaml", Line: 8, Col: 12},
				Workers:       DefaultWorkers,
				Admission:     defaultAdmission,
				Timeout:       DefaultTimeout,
				Retries:       DefaultRetries,
				MaxActions:    DefaultMaxActions,
				MemoryLimit:   DefaultMemoryLimit,
				ActionWorkers: DefaultActionWorkers,
				Delivery:      DeliverLatest,
				RateLimit:     DefaultRateLimit,
				Burst:         20,
				Source:        "testdata/valid/minimal.yaml",
			}},
		},
		{
			file: "testdata/valid/multi.yaml",
			want: []*Rule{
				{
					Name:      "label-new-namespaces",
					Pos:       diag.Position{File: "testdata/valid/multi.yaml", Line: 5, Col: 9},
					Watch:     []Watch{{Resource: "namespaces", Pos: diag.Position{File: "testdata/valid/multi.yaml", Line: 8, Col: 17}}},
					Events:    []event.Type{event.Add},
					EventsPos: diag.Position{File: "testdata/valid/multi.yaml", Line: 9, Col: 11},
					Permissions: []Permission{{
						// An alias has the anchored value and its own
						// position.
						Resources: []Ref{{"namespaces", diag.Position{File: "testdata/valid/multi.yaml", Line: 11, Col: 19}}},
						Verbs:     []actions.Verb{actions.Patch},
						Pos:       diag.Position{File: "testdata/valid/multi.yaml", Line: 11, Col: 7},
					}},
					Script:        multiScript,
					ScriptFile:    "label-namespaces.js",
					ScriptLang:    ScriptJavaScript,
					ScriptPos:     diag.Position{File: filepath.Join("testdata", "valid", "label-namespaces.js"), Line: 1, Col: 1},
					Workers:       1,
					Admission:     defaultAdmission,
					Timeout:       time.Second,
					Retries:       5,
					MaxActions:    DefaultMaxActions,
					MemoryLimit:   DefaultMemoryLimit,
					ActionWorkers: DefaultActionWorkers,
					Delivery:      DeliverLatest,
					RateLimit:     10,
					Burst:         20,
					Source:        "testdata/valid/multi.yaml",
				},
				{
					Name: "relabel-namespaces",
					Pos:  diag.Position{File: "testdata/valid/multi.yaml", Line: 18, Col: 9},
					Watch: []Watch{{
						Resource:         "namespaces",
						LabelSelector:    "!kreact.dev/labelled",
						Pos:              diag.Position{File: "testdata/valid/multi.yaml", Line: 21, Col: 17},
						LabelSelectorPos: diag.Position{File: "testdata/valid/multi.yaml", Line: 22, Col: 22},
					}},
					Events:        []event.Type{event.Update},
					EventsPos:     diag.Position{File: "testdata/valid/multi.yaml", Line: 23, Col: 11},
					IgnoreChanges: []FieldPath{{"status"}, {"metadata", "labels"}},
					IgnoreChangesPos: []diag.Position{
						{File: "testdata/valid/multi.yaml", Line: 24, Col: 19},
						{File: "testdata/valid/multi.yaml", Line: 24, Col: 27},
					},
					Permissions: []Permission{{
						Resources: []Ref{{"namespaces", diag.Position{File: "testdata/valid/multi.yaml", Line: 26, Col: 20}}},
						Verbs:     []actions.Verb{actions.Patch},
						Pos:       diag.Position{File: "testdata/valid/multi.yaml", Line: 26, Col: 7},
					}},
					Script:        multiScript,
					ScriptFile:    "label-namespaces.js",
					ScriptLang:    ScriptJavaScript,
					ScriptPos:     diag.Position{File: filepath.Join("testdata", "valid", "label-namespaces.js"), Line: 1, Col: 1},
					Workers:       1,
					Admission:     defaultAdmission,
					Timeout:       time.Second,
					Retries:       5,
					MaxActions:    DefaultMaxActions,
					MemoryLimit:   DefaultMemoryLimit,
					ActionWorkers: DefaultActionWorkers,
					Delivery:      DeliverLatest,
					RateLimit:     0.5,
					Burst:         1,
					Source:        "testdata/valid/multi.yaml",
				},
			},
		},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			got, err := ParseFile(tt.file)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %d rules, want %d", len(got), len(tt.want))
			}
			for i := range got {
				if !reflect.DeepEqual(got[i], tt.want[i]) {
					t.Errorf("rule %d:\ngot  %+v\nwant %+v", i, *got[i], *tt.want[i])
				}
			}
		})
	}
}

const multiScript = `function onAdd(obj, ctx) {
  kreact.patch(obj, {metadata: {labels: {"kreact.dev/labelled": "true"}}});
}

function onUpdate(oldObj, obj, ctx) {
  onAdd(obj, ctx);
}
`

func TestDefaults(t *testing.T) {
	const head = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n  watch: [{resource: pods}]\n  script: x\n"
	tests := []struct {
		name  string
		extra string
		check func(*Rule) bool
	}{
		{"events default to all", "", func(r *Rule) bool { return reflect.DeepEqual(r.Events, AllEvents()) }},
		{"events null is all", "  events:\n", func(r *Rule) bool { return reflect.DeepEqual(r.Events, AllEvents()) }},
		{"events in canonical order", "  events: [delete, add]\n", func(r *Rule) bool {
			return reflect.DeepEqual(r.Events, []event.Type{event.Add, event.Delete})
		}},
		{"workers", "", func(r *Rule) bool { return r.Workers == 1 }},
		{"timeout", "", func(r *Rule) bool { return r.Timeout == time.Second }},
		{"timeout null", "  timeout: null\n", func(r *Rule) bool { return r.Timeout == time.Second }},
		{"memory limit", "", func(r *Rule) bool { return r.MemoryLimit == 64<<20 }},
		{"memory limit set", "  memoryLimit: 256Mi\n", func(r *Rule) bool { return r.MemoryLimit == 256<<20 }},
		{"memory limit in SI units", "  memoryLimit: 100M\n", func(r *Rule) bool { return r.MemoryLimit == 100_000_000 }},
		{"retries", "", func(r *Rule) bool { return r.Retries == 5 }},
		{"retries zero is kept", "  retries: 0\n", func(r *Rule) bool { return r.Retries == 0 }},
		{"rate limit", "", func(r *Rule) bool { return r.RateLimit == 10 }},
		{"burst is twice the rate", "  rateLimit: 7\n", func(r *Rule) bool { return r.Burst == 14 }},
		{"burst rounds up", "  rateLimit: 0.7\n", func(r *Rule) bool { return r.Burst == 2 }},
		{"burst at least one", "  rateLimit: 0.1\n", func(r *Rule) bool { return r.Burst == 1 }},
		{"burst set", "  burst: 1\n", func(r *Rule) bool { return r.Burst == 1 }},
		{"dry run off", "", func(r *Rule) bool { return !r.DryRun }},
		{"not isolated", "", func(r *Rule) bool { return !r.Isolate }},
		{"isolated", "  isolate: true\n", func(r *Rule) bool { return r.Isolate }},
		{"hex integer", "  workers: 0x10\n", func(r *Rule) bool { return r.Workers == 16 }},
		{"integer rate", "  rateLimit: 3\n", func(r *Rule) bool { return r.RateLimit == 3 }},
		{"nothing ignored", "", func(r *Rule) bool { return r.IgnoreChanges == nil && len(r.IgnoredPaths()) == 2 }},
		{"no permissions", "", func(r *Rule) bool { return r.Permissions == nil && r.Reads == nil && r.HTTP == nil }},
		{"script position", "", func(r *Rule) bool { return r.ScriptPos == diag.Position{File: "r.yaml", Line: 6, Col: 11} }},
		{"admission defaults", "", func(r *Rule) bool {
			return r.Admission == Admission{FailurePolicy: FailIgnore, Timeout: 5 * time.Second, Mode: AdmissionEnforce}
		}},
		{"admission set", "  admission: {failurePolicy: Fail, timeout: 10s, mode: audit}\n", func(r *Rule) bool {
			return r.Admission == Admission{FailurePolicy: FailFail, Timeout: 10 * time.Second, Mode: AdmissionAudit, Pos: diag.Position{File: "r.yaml", Line: 7, Col: 3}}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rules, err := Parse("r.yaml", []byte(head+tt.extra))
			if err != nil {
				t.Fatal(err)
			}
			if len(rules) != 1 {
				t.Fatalf("got %d rules", len(rules))
			}
			if !tt.check(rules[0]) {
				t.Errorf("check failed for %+v", *rules[0])
			}
		})
	}
}

func TestScriptPosition(t *testing.T) {
	const src = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: positions
spec:
  watch:
    - resource: pods
  script: |

      function onAdd(obj) {
        throw new Error("x");
      }
`
	rules, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	r := rules[0]
	if want := (diag.Position{File: "p.yaml", Line: 9, Col: 7}); r.ScriptPos != want {
		t.Errorf("ScriptPos = %v, want %v", r.ScriptPos, want)
	}
	// Line 3 of the script ("  throw ...") column 3 is the "t" of throw.
	if got, want := r.ScriptPosition(3, 3), (diag.Position{File: "p.yaml", Line: 11, Col: 9}); got != want {
		t.Errorf("ScriptPosition(3, 3) = %v, want %v", got, want)
	}
	lines := strings.Split(src, "\n")
	if got := lines[11-1][9-1:][:5]; got != "throw" {
		t.Errorf("position points at %q, want throw", got)
	}
	if got := r.ScriptPosition(0, 0); got != (diag.Position{File: "p.yaml"}) {
		t.Errorf("ScriptPosition(0, 0) = %v", got)
	}

	const indented = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: p}\nspec:\n  watch: [{resource: pods}]\n  script: |2\n      extra(); // indented by two more\n    done();\n"
	rules, err = Parse("i.yaml", []byte(indented))
	if err != nil {
		t.Fatal(err)
	}
	if want := (diag.Position{File: "i.yaml", Line: 7, Col: 5}); rules[0].ScriptPos != want {
		t.Errorf("explicit indentation: ScriptPos = %v, want %v (script %q)", rules[0].ScriptPos, want, rules[0].Script)
	}
}

func TestParseSkipsEmptyDocuments(t *testing.T) {
	for _, src := range []string{"", "# nothing\n", "---\n---\n", "\ufeff# bom\n"} {
		rules, err := Parse("e.yaml", []byte(src))
		if err != nil || len(rules) != 0 {
			t.Errorf("Parse(%q) = %d rules, %v; want none, nil", src, len(rules), err)
		}
	}
}

func TestParseCRLF(t *testing.T) {
	src := "apiVersion: kreact.dev/v1alpha1\r\nkind: Rule\r\nmetadata:\r\n  name: crlf\r\nspec:\r\n  watch: [{resource: pods}]\r\n  script: |\r\n    a();\r\n  workers: x\r\n"
	_, err := Parse("c.yaml", []byte(src))
	if err == nil || err.Error() != `c.yaml:9:12: spec.workers: expected an integer, got string "x"` {
		t.Errorf("err = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rule := func(name string) string {
		return "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: " + name + "\nspec:\n  watch: [{resource: pods}]\n  script: x\n"
	}
	write("b.yaml", rule("b"))
	write("a.yml", rule("a")+"---\n"+rule("a2"))
	write("notes.txt", "not yaml: [")
	write(".backup.yaml", "not yaml: [")
	write("sub/c.yaml", rule("c"))
	write("..data/d.yaml", rule("d"))
	write("other/e.yaml", rule("e"))
	write("other/f.rules", rule("f"))

	rules, err := Load(dir, filepath.Join(dir, "b.yaml"), filepath.Join(dir, "other", "f.rules"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range rules {
		names = append(names, r.Name)
	}
	if want := []string{"a", "a2", "b", "f"}; !reflect.DeepEqual(names, want) {
		t.Errorf("loaded %v, want %v", names, want)
	}

	if err := os.Symlink(filepath.Join(dir, "b.yaml"), filepath.Join(dir, "other", "link.yaml")); err != nil {
		t.Fatal(err)
	}
	write("other/g.yaml", rule("b"))
	write("other/h.yaml", "kind: [")
	_, err = Load(dir, filepath.Join(dir, "other"), filepath.Join(dir, "missing"))
	if err == nil {
		t.Fatal("Load succeeded, want duplicate name errors")
	}
	got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	// other/link.yaml is b.yaml again under another name: a symlink is
	// followed and counts as a file of its own.
	want := `missing: no such file or directory
other/g.yaml:4:9: duplicate rule name "b" (also at b.yaml:4:9)
other/h.yaml:1:1: invalid YAML: did not find expected node content
other/link.yaml:4:9: duplicate rule name "b" (also at b.yaml:4:9)`
	if got != want {
		t.Errorf("Load errors:\n%s\nwant:\n%s", got, want)
	}
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list.Unwrap()) != 4 {
		t.Errorf("error %T does not unwrap to 4 errors", err)
	}
}

func TestSyntaxErrorPositions(t *testing.T) {
	const head = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: s\nspec:\n"
	tests := []struct {
		name string
		body string
		want string
	}{
		{"mapping value in plain scalar", "  watch: a: b\n", "s.yaml:6:3: invalid YAML: mapping values are not allowed in this context"},
		{"unclosed quote", "  script: \"abc\n  workers: 1\n", "s.yaml:6:3: invalid YAML: found unexpected end of stream"},
		{"tab after spaces", "  watch:\n  \t- resource: pods\n", "s.yaml:7:3: tab character in indentation; YAML indents with spaces only"},
		{"dedented key", "  watch:\n    - resource: pods\n script: x\n", "s.yaml:8:2: invalid YAML: did not find expected key"},
		{"multi-line flow list is fine, later error", "  watch: [\n    {resource: pods}]\n  events: [add\n", "s.yaml:8:3: invalid YAML: did not find expected ',' or ']'"},
		{"tab inside a literal block is text", "  watch: [{resource: pods}]\n  script: |\n    a();\n    \tb();\n  workers: [\n", "s.yaml:10:3: invalid YAML: did not find expected node content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("s.yaml", []byte(head+tt.body))
			if err == nil || err.Error() != tt.want {
				t.Errorf("err = %v\nwant  %s", err, tt.want)
			}
		})
	}
}

// TestLoadAll: beside every problem, LoadAll returns the rules without
// problems and, for checkers, the broken rules whose scripts can be
// checked, with what they say about ticking and events.
func TestLoadAll(t *testing.T) {
	doc := func(name, spec string) string {
		return "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: " + name + "}\nspec:\n  watch: [{resource: configmaps}]\n" + spec + "---\n"
	}
	file := filepath.Join(t.TempDir(), "rules.yaml")
	content := doc("good", "  script: \"function onAdd() {}\"\n") +
		doc("bad-schedule", "  schedule: \"0 25 * * *\"\n  script: \"function onAdd() {}\"\n") +
		doc("bad-event", "  events: [add, updte]\n  script: \"function onUpdate() {}\"\n") +
		doc("bad-lang", "  scriptLang: typescipt\n  script: \"const x: number = 1;\"\n") +
		doc("Bad_Name", "  script: \"function onAdd() {}\"\n") +
		doc("no-script", "  every: 1x\n")
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, broken, failed, err := LoadAll(file)
	if !slices.Equal(failed, []string{file}) {
		t.Errorf("failed = %v, want [%s]", failed, file)
	}
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 6 {
		t.Errorf("err = %v, want the 6 problems", err)
	}
	if len(rs) != 1 || rs[0].Name != "good" {
		t.Errorf("rules = %v, want good", rs)
	}
	if len(broken) != 2 || broken[0].Name != "bad-schedule" || broken[1].Name != "bad-event" {
		t.Fatalf("broken = %v, want bad-schedule and bad-event", broken)
	}
	if broken[0].Schedule != "0 25 * * *" {
		t.Errorf("Schedule = %q, want what was written", broken[0].Schedule)
	}
	if !reflect.DeepEqual(broken[1].Events, AllEvents()) {
		t.Errorf("Events = %v, want all three", broken[1].Events)
	}
}

func TestWatchProjection(t *testing.T) {
	rs, err := Parse("p.yaml", []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: p}
spec:
  watch:
    - resource: deployments
      fields: [spec.replicas, 'metadata.annotations["x"]', status]
    - resource: configmaps
      fields: []
    - resource: secrets
    - resource: pods
      fields: null
  script: "function onAdd() {}"
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"spec.replicas,status", "", "*", "*"}
	for i, w := range rs[0].Watch {
		if got := w.Projection().String(); got != want[i] {
			t.Errorf("spec.watch[%d]: projection %q, want %q", i, got, want[i])
		}
	}
	if p := rs[0].Watch[0].FieldsPos; p.Line != 7 || p.Col != 15 {
		t.Errorf("FieldsPos = %s, want 7:15", p)
	}
}
