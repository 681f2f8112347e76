package yamlnode

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/diag"
)

func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return doc.Content[0]
}

func TestObject(t *testing.T) {
	known := []string{"name", "replicas", "labels", "image", "command"}
	tests := []struct {
		name string
		text string
		keys []string
		errs []string
	}{
		{"known fields", "name: a\nreplicas: 1\n", []string{"name", "replicas"}, nil},
		{"misspelt", "nmae: a\n", nil, []string{`f.yaml:1:1: unknown field "x.nmae" (did you mean "name"?)`}},
		{"case", "Name: a\n", nil, []string{`f.yaml:1:1: unknown field "x.Name" (did you mean "name"?)`}},
		{"hint", "spec: 1\n", nil, []string{`f.yaml:1:1: unknown field "x.spec" (hint for spec)`}},
		{"duplicate", "name: a\nname: b\n", []string{"name"}, []string{`f.yaml:2:1: duplicate field "x.name" (first at 1:1)`}},
		{"merge key", "base: &b {name: a}\nx:\n  <<: *b\n", nil, nil},
		{"not a mapping", "[1, 2]\n", nil, []string{"f.yaml:1:1: x: expected a mapping, got a list"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var errs diag.ErrorList
			d := &Decoder{File: "f.yaml", Errs: &errs, Hint: func(path, name string) string {
				if name == "spec" {
					return " (hint for spec)"
				}
				return ""
			}}
			n := parse(t, tt.text)
			if tt.name == "merge key" {
				n = Lookup(n, "x").Value
				tt.errs = []string{"f.yaml:3:3: x: merge keys (<<) are not supported"}
			}
			m := d.Object(n, "x", known)
			var keys []string
			for _, k := range known {
				if e, ok := m[k]; ok && e.Present() {
					keys = append(keys, k)
				}
			}
			if !reflect.DeepEqual(keys, tt.keys) {
				t.Errorf("keys = %q, want %q", keys, tt.keys)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if !reflect.DeepEqual(got, tt.errs) {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.errs, "\n"))
			}
		})
	}
	var errs diag.ErrorList
	(&Decoder{File: "f.yaml", Errs: &errs}).Object(parse(t, "a: 1\nb: 2\n"), "small", []string{"name"})
	if len(errs) != 2 || !strings.HasSuffix(errs[0].Msg, `unknown field "small.a" (small has only name)`) {
		t.Errorf("a small object names its fields: %v", errs)
	}
}

func TestScalars(t *testing.T) {
	var errs diag.ErrorList
	d := &Decoder{File: "f.yaml", Errs: &errs}
	n := parse(t, "s: text\nyear: 2024\nb: true\nl: [a]\nnull: ~\n")
	if s, ok := d.Str(Lookup(n, "s").Value, "s"); !ok || s != "text" {
		t.Errorf("Str = %q, %v", s, ok)
	}
	if _, ok := d.Str(Lookup(n, "year").Value, "year"); ok {
		t.Error("Str accepts an integer")
	}
	if b, ok := d.Bool(Lookup(n, "b").Value, "b"); !ok || !b {
		t.Errorf("Bool = %v, %v", b, ok)
	}
	if _, ok := d.Bool(Lookup(n, "s").Value, "s"); ok {
		t.Error("Bool accepts a string")
	}
	if items, ok := d.List(Lookup(n, "l").Value, "l"); !ok || len(items) != 1 {
		t.Errorf("List = %v, %v", items, ok)
	}
	if _, ok := d.List(Lookup(n, "null").Value, "null"); ok {
		t.Error("List of null is ok")
	}
	if _, ok := d.List(Lookup(n, "s").Value, "s"); ok {
		t.Error("List accepts a string")
	}
	want := []string{
		`f.yaml:2:7: year: expected a string, got integer 2024 (quote it: "2024")`,
		`f.yaml:1:4: s: expected true or false, got string "text"`,
		`f.yaml:1:4: s: expected a list, got string "text"`,
	}
	if len(errs) != len(want) {
		t.Fatalf("errors:\n%v\nwant:\n%s", errs, strings.Join(want, "\n"))
	}
	for i, e := range errs {
		if e.Error() != want[i] {
			t.Errorf("error %d = %s, want %s", i, e, want[i])
		}
	}
}

func TestValue(t *testing.T) {
	var errs diag.ErrorList
	d := &Decoder{File: "f.yaml", Errs: &errs}
	v, ok := d.Value(parse(t, "n: 3\nf: 1.5\nt: 2026-01-01T00:00:00Z\nl: [true, null]\nbig: 99999999999999999999\n"), "obj")
	want := map[string]any{"n": int64(3), "f": 1.5, "t": "2026-01-01T00:00:00Z", "l": []any{true, nil}, "big": 1e20}
	if !ok || !reflect.DeepEqual(v, want) {
		t.Errorf("Value = %#v, %v; want %#v", v, ok, want)
	}
	for text, msg := range map[string]string{
		"1: a\n":    "f.yaml:1:1: obj: key integer 1: keys must be strings",
		"x: .inf\n": "f.yaml:1:4: obj: .inf is not a JSON number",
	} {
		errs = nil
		if _, ok := d.Value(parse(t, text), "obj"); ok || len(errs) != 1 || errs[0].Error() != msg {
			t.Errorf("Value(%q): %v, want %s", text, errs, msg)
		}
	}
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	errs = nil
	if _, ok := d.Value(parse(t, deep), "obj"); ok || len(errs) != 1 || !strings.Contains(errs[0].Msg, "nested too deeply") {
		t.Errorf("Value of %d nested lists: %v", maxDepth+2, errs)
	}
}

func TestSyntaxPos(t *testing.T) {
	var doc yaml.Node
	err := yaml.Unmarshal([]byte("a: 1\nb: [\n"), &doc)
	if err == nil {
		t.Fatal("no syntax error")
	}
	pos, msg := SyntaxPos("f.yaml", err)
	if pos.File != "f.yaml" || pos.Line == 0 || !strings.HasPrefix(msg, "invalid YAML: ") {
		t.Errorf("SyntaxPos = %v, %q", pos, msg)
	}
	pos, msg = SyntaxPos("f.yaml", errors.New("yaml: something"))
	if pos != (diag.Position{File: "f.yaml"}) || msg != "invalid YAML: something" {
		t.Errorf("SyntaxPos without a line = %v, %q", pos, msg)
	}
}
