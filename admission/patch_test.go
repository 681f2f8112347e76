package admission

import (
	"encoding/json"
	"strings"
	"testing"
)

func namespace() map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "Namespace",
		"metadata": map[string]any{
			"name":        "team-a",
			"labels":      map[string]any{"kubernetes.io/metadata.name": "team-a"},
			"annotations": map[string]any{"a/b~c": "x"},
		},
		"spec": map[string]any{"finalizers": []any{"kubernetes"}},
	}
}

func TestPatch(t *testing.T) {
	tests := []struct {
		name   string
		change string
		want   string // the JSON patch; "null" for none
		err    string
	}{
		{"no change", `null`, `null`, ""},
		{"merge patch adds a label", `{"metadata":{"labels":{"team":"a"}}}`,
			`[{"op":"add","path":"/metadata/labels/team","value":"a"}]`, ""},
		{"merge patch null removes, keys escaped", `{"metadata":{"annotations":{"a/b~c":null}}}`,
			`[{"op":"remove","path":"/metadata/annotations/a~1b~0c"}]`, ""},
		{"merge patch replaces a list whole", `{"spec":{"finalizers":["x"]}}`,
			`[{"op":"replace","path":"/spec/finalizers","value":["x"]}]`, ""},
		{"merge patch that changes nothing", `{"metadata":{"name":"team-a"}}`, `null`, ""},
		{"merge patch adds a map", `{"data":{"k":1}}`, `[{"op":"add","path":"/data","value":{"k":1}}]`, ""},
		{"json patch", `[{"op":"add","path":"/metadata/labels/team","value":"a"},{"op":"replace","path":"/spec/finalizers/0","value":null}]`,
			`[{"op":"add","path":"/metadata/labels/team","value":"a"},{"op":"replace","path":"/spec/finalizers","value":[null]}]`, ""},
		{"json patch replace of a missing field", `[{"op":"replace","path":"/spec/nothere","value":1}]`, "",
			"json patch: operation 0: replace /spec/nothere: the object has no such field"},
		{"json patch replace of a missing item", `[{"op":"add","path":"/x","value":[]},{"op":"replace","path":"/x/0","value":1}]`, "",
			"json patch: operation 1: replace /x/0: the object has no such field"},
		{"json patch remove of a missing field", `[{"op":"remove","path":"/metadata/labels/nothere"}]`, "",
			"json patch: "},
		{"json patch failed test", `[{"op":"test","path":"/kind","value":"Pod"}]`, "", "json patch: "},
		{"name", `{"metadata":{"name":"b"}}`, "", "the change may not alter metadata.name, which identify the object"},
		{"kind and namespace", `[{"op":"replace","path":"/kind","value":"Pod"},{"op":"add","path":"/metadata/namespace","value":"x"}]`, "",
			"the change may not alter kind, metadata.namespace"},
		{"not a change", `"x"`, "", "a change is a merge patch (an object) or JSON patch operations (an array), not string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var change any
			if err := json.Unmarshal([]byte(tt.change), &change); err != nil {
				t.Fatal(err)
			}
			obj := namespace()
			ops, err := Patch(obj, change)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Patch = %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, _ := json.Marshal(ops)
			if string(got) != tt.want {
				t.Errorf("Patch = %s\nwant %s", got, tt.want)
			}
			if b1, b2 := mustJSON(t, obj), mustJSON(t, namespace()); b1 != b2 {
				t.Errorf("Patch modified the object: %s", b1)
			}
		})
	}
}

func mustJSON(t *testing.T, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
