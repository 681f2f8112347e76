package restmapper

import (
	"strings"
	"testing"
)

func TestResourcesFromCRDFile(t *testing.T) {
	const crd = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, kind: Widget}
  versions: [{name: v1, served: true, storage: true}]
`
	tests := []struct {
		name      string
		data      string
		resources int
		errs      string
	}{
		{"one CRD", crd, 1, ""},
		{"empty documents", "---\n---\n" + crd + "---\n", 1, ""},
		{"not a mapping", "- a\n---\n" + crd, 1, "crds.yaml:1:1: want a CustomResourceDefinition, a mapping"},
		{"no resources", "kind: CustomResourceDefinition\nspec: {}\n", 0, "crds.yaml:1:1: "},
		{"syntax error", crd + "---\nkey: [\n", 1, "crds.yaml: invalid YAML: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, errs := ResourcesFromCRDFile("crds.yaml", []byte(tt.data))
			if len(rs) != tt.resources {
				t.Errorf("%d resources, want %d", len(rs), tt.resources)
			}
			if tt.errs == "" && errs != nil || tt.errs != "" && (len(errs) != 1 || !strings.HasPrefix(errs.Error(), tt.errs)) {
				t.Errorf("errors = %v, want one starting %q", errs, tt.errs)
			}
		})
	}
}
