package ruletest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// jsonSchema is the part of JSON Schema that ruletest.schema.json uses for
// structure.
type jsonSchema struct {
	Ref                  string                 `json:"$ref"`
	Properties           map[string]*jsonSchema `json:"properties"`
	Items                *jsonSchema            `json:"items"`
	AdditionalProperties json.RawMessage        `json:"additionalProperties"`
	OneOf                []*jsonSchema          `json:"oneOf"`
	Definitions          map[string]*jsonSchema `json:"definitions"`
}

// TestSchemaKnowsEveryField checks that every key of the valid test files
// (these tests' and the examples') is declared by the schema at its place.
func TestSchemaKnowsEveryField(t *testing.T) {
	data, err := os.ReadFile("schema/ruletest.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, JSONSchema()) {
		t.Error("JSONSchema() differs from schema/ruletest.schema.json")
	}
	var root jsonSchema
	if err := json.Unmarshal(data, &root); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../examples/tests/*.yaml")
	files = append(files, "testdata/pass.yaml", "testdata/broken.yaml", "testdata/script-error.yaml", "testdata/tick.yaml", "testdata/clock.yaml", "testdata/schedule.yaml", "testdata/admission.yaml")
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var doc yaml.Node
		if err := yaml.Unmarshal(src, &doc); err != nil {
			t.Fatal(err)
		}
		var problems []string
		check(&root, &root, doc.Content[0], "", &problems)
		for _, p := range problems {
			t.Errorf("%s: %s", file, p)
		}
	}
}

func (s *jsonSchema) resolve(root *jsonSchema) *jsonSchema {
	if name, ok := strings.CutPrefix(s.Ref, "#/definitions/"); ok {
		return root.Definitions[name]
	}
	return s
}

// check reports the keys of n that s does not declare. For oneOf, the
// alternative that accepts n best counts.
func check(root, s *jsonSchema, n *yaml.Node, path string, problems *[]string) {
	s = s.resolve(root)
	if len(s.OneOf) > 0 {
		var best []string
		for i, alt := range s.OneOf {
			var p []string
			check(root, alt, n, path, &p)
			if i == 0 || len(p) < len(best) {
				best = p
			}
		}
		*problems = append(*problems, best...)
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, val := n.Content[i].Value, n.Content[i+1]
			prop, ok := s.Properties[key]
			switch {
			case ok:
				check(root, prop, val, path+"."+key, problems)
			case string(s.AdditionalProperties) == "false":
				*problems = append(*problems, "schema does not declare "+path+"."+key)
			}
		}
	case yaml.SequenceNode:
		if s.Items != nil {
			for _, item := range n.Content {
				check(root, s.Items, item, path+"[]", problems)
			}
		}
	}
}
