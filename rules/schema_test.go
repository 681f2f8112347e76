package rules

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/kreact/kreact/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// jsonSchema is the part of JSON Schema that rule.schema.json uses for
// structure.
type jsonSchema struct {
	Ref                  string                 `json:"$ref"`
	Type                 string                 `json:"type"`
	Properties           map[string]*jsonSchema `json:"properties"`
	Items                *jsonSchema            `json:"items"`
	AdditionalProperties *bool                  `json:"additionalProperties"`
	Required             []string               `json:"required"`
	Definitions          map[string]*jsonSchema `json:"definitions"`
}

func loadSchema(t *testing.T) *jsonSchema {
	t.Helper()
	data, err := os.ReadFile("schema/rule.schema.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, JSONSchema()) {
		t.Error("JSONSchema() differs from schema/rule.schema.json")
	}
	var s jsonSchema
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&s); err != nil {
		t.Fatal(err)
	}
	return &s
}

func (s *jsonSchema) resolve(root *jsonSchema) *jsonSchema {
	if name, ok := strings.CutPrefix(s.Ref, "#/definitions/"); ok {
		return root.Definitions[name]
	}
	return s
}

// TestSchemaKnowsValidExamples walks every document of testdata/valid and
// checks that each key is a property the schema declares at that place.
func TestSchemaKnowsValidExamples(t *testing.T) {
	root := loadSchema(t)
	files, _ := filepath.Glob("testdata/valid/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples")
	}
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		dec := yaml.NewDecoder(bytes.NewReader(data))
		for {
			var doc yaml.Node
			if err := dec.Decode(&doc); err != nil {
				break
			}
			if len(doc.Content) > 0 {
				walkSchema(t, file, root, root, doc.Content[0], "")
			}
		}
	}
}

func walkSchema(t *testing.T, file string, root, s *jsonSchema, n *yaml.Node, path string) {
	s = s.resolve(root)
	n = yamlnode.Deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		if s.Type != "object" {
			t.Errorf("%s:%d:%d: %s is a mapping, schema says %q", file, n.Line, n.Column, path, s.Type)
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			prop, ok := s.Properties[k.Value]
			if !ok {
				t.Errorf("%s:%d:%d: schema does not know %q", file, k.Line, k.Column, yamlnode.Join(path, k.Value))
				continue
			}
			walkSchema(t, file, root, prop, n.Content[i+1], yamlnode.Join(path, k.Value))
		}
	case yaml.SequenceNode:
		if s.Type != "array" || s.Items == nil {
			t.Errorf("%s:%d:%d: %s is a list, schema says %q", file, n.Line, n.Column, path, s.Type)
			return
		}
		for _, it := range n.Content {
			walkSchema(t, file, root, s.Items, it, path+"[]")
		}
	}
}

// TestSchemaMatchesDecoder checks that the schema and the decoder know the
// same fields, so that neither can drift from the other.
func TestSchemaMatchesDecoder(t *testing.T) {
	root := loadSchema(t)
	tests := []struct {
		name   string
		schema *jsonSchema
		fields []string
	}{
		{"document", root, documentFields},
		{"metadata", root.Properties["metadata"], metadataFields},
		{"spec", root.Properties["spec"], specFields},
		{"watch", root.Definitions["watch"], watchFields},
		{"permission", root.Definitions["permission"], permissionFields},
	}
	for _, tt := range tests {
		if tt.schema.AdditionalProperties == nil || *tt.schema.AdditionalProperties {
			t.Errorf("%s: schema allows additional properties", tt.name)
		}
		var props []string
		for k := range tt.schema.Properties {
			props = append(props, k)
		}
		sort.Strings(props)
		fields := slices.Clone(tt.fields)
		sort.Strings(fields)
		if !slices.Equal(props, fields) {
			t.Errorf("%s: schema properties %v, decoder fields %v", tt.name, props, fields)
		}
	}
}
