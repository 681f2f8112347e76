package docs

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/kreact/kreact/rules"
)

// TestRuleFieldsDocumented checks rules.md against the rule format's
// JSON Schema (which rules' tests hold to the decoder): every field of
// spec is named in rules.md, a top-level one as `spec.FIELD` in the
// fields table, a nested one as `FIELD` or `spec.PARENT.FIELD`.
func TestRuleFieldsDocumented(t *testing.T) {
	fields := specFields(t)
	data, err := os.ReadFile(filepath.Join(root, "docs", "rules.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	table := section(doc, "## Fields")
	for _, f := range fields {
		parent, name, nested := strings.Cut(strings.TrimPrefix(f, "spec."), ".")
		if !nested {
			// An object's fields may have the rows instead (spec.admission.mode).
			if !strings.Contains(table, "| `"+f+"` |") && !strings.Contains(table, "| `"+f+".") {
				t.Errorf("docs/rules.md: the fields table has no row for %s", f)
			}
			continue
		}
		if !strings.Contains(doc, "`"+name+"`") && !strings.Contains(doc, "`spec."+parent+"."+name+"`") {
			t.Errorf("docs/rules.md does not name %s", f)
		}
	}
}

// TestRuleFieldNamesInDocs checks that every spec.FIELD the user docs
// write is a field of the rule format, or of a RuleTest's spec (whose
// fields testing.md names).
func TestRuleFieldNamesInDocs(t *testing.T) {
	known := map[string]bool{}
	for _, f := range specFields(t) {
		known[strings.TrimPrefix(f, "spec.")] = true
	}
	// A RuleTest's spec: ruletest's schema is checked by its own tests.
	for _, f := range []string{"rules", "fixtures", "crds", "cases", "now"} {
		known[f] = true
	}
	ref := regexp.MustCompile("`spec\\.([a-zA-Z]+(?:\\[\\])?(?:\\.[a-zA-Z]+)?)")
	for _, d := range userDocs(t) {
		for i, line := range strings.Split(d.text, "\n") {
			for _, m := range ref.FindAllStringSubmatch(line, -1) {
				name := strings.ReplaceAll(m[1], "[]", "")
				if !known[name] {
					t.Errorf("%s:%d: spec.%s is not a field of a rule", d.name, i+1, m[1])
				}
			}
		}
	}
}

// specFields returns the fields of a rule's spec in the JSON Schema, as
// spec.FIELD and spec.FIELD.SUBFIELD (list items' fields too).
func specFields(t *testing.T) []string {
	t.Helper()
	type node struct {
		Properties map[string]*node `json:"properties"`
		Items      *node            `json:"items"`
		Ref        string           `json:"$ref"`
		OneOf      []*node          `json:"oneOf"`
		AnyOf      []*node          `json:"anyOf"`
	}
	var schema struct {
		node
		Defs map[string]*node `json:"$defs"`
		Old  map[string]*node `json:"definitions"`
	}
	if err := json.Unmarshal(rules.JSONSchema(), &schema); err != nil {
		t.Fatal(err)
	}
	resolve := func(n *node) *node {
		for n != nil && n.Ref != "" {
			name := n.Ref[strings.LastIndex(n.Ref, "/")+1:]
			if d, ok := schema.Defs[name]; ok {
				n = d
			} else {
				n = schema.Old[name]
			}
		}
		return n
	}
	var fields []string
	var walk func(path string, n *node, depth int)
	walk = func(path string, n *node, depth int) {
		n = resolve(n)
		if n == nil || depth > 2 {
			return
		}
		for name, p := range n.Properties {
			fields = append(fields, path+"."+name)
			walk(path+"."+name, p, depth+1)
		}
		walk(path, n.Items, depth)
		for _, alt := range append(n.OneOf, n.AnyOf...) {
			walk(path, alt, depth)
		}
	}
	walk("spec", schema.Properties["spec"], 1)
	if len(fields) < 20 {
		t.Fatalf("only %d spec fields in the schema: the schema walk is broken", len(fields))
	}
	slices.Sort(fields)
	return slices.Compact(fields)
}
