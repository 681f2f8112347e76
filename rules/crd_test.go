package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// crdDirs hold the generated CRD manifests: beside the other manifests
// of deploy/, and in the Helm chart's crds/, which Helm installs first.
var crdDirs = []string{"../deploy/crds", "../charts/kreact/crds"}

// crdFiles renders CRDs as the files of crdDir.
func crdFiles(t *testing.T) map[string][]byte {
	t.Helper()
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, c := range crds {
		data, err := yaml.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		name := c["metadata"].(map[string]any)["name"].(string)
		header := "# Generated from rules/schema/rule.schema.json by rules.CRDs; do not edit.\n" +
			"# Regenerate: go test ./rules -run TestCRDFilesAreGenerated -update\n"
		files[name+".yaml"] = append([]byte(header), data...)
	}
	return files
}

// TestCRDFilesAreGenerated: deploy/crds and the chart's crds/ hold exactly what CRDs makes of
// the rule schema, so the schema of rule files and of rule objects are
// one; -update rewrites the files.
func TestCRDFilesAreGenerated(t *testing.T) {
	files := crdFiles(t)
	for _, crdDir := range crdDirs {
		if *update {
			if err := os.MkdirAll(crdDir, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, data := range files {
				if err := os.WriteFile(filepath.Join(crdDir, name), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		}
		for name, want := range files {
			got, err := os.ReadFile(filepath.Join(crdDir, name))
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s/%s is not what rules.CRDs makes of the schema (%v): go test ./rules -run TestCRDFilesAreGenerated -update", crdDir, name, err)
			}
		}
		entries, _ := os.ReadDir(crdDir)
		for _, e := range entries {
			if _, ok := files[e.Name()]; !ok && strings.HasSuffix(e.Name(), ".yaml") {
				t.Errorf("%s/%s is not a CRD that rules.CRDs makes", crdDir, e.Name())
			}
		}
	}
}

// TestCRDConverterRefusesWhatItCannotExpress: a keyword the converter
// does not know is an error with its path, not a schema that checks less.
func TestCRDConverterRefusesWhatItCannotExpress(t *testing.T) {
	c := converter{definitions: map[string]any{}}
	_, err := c.convert("spec", map[string]any{"type": "object", "properties": map[string]any{
		"x": map[string]any{"type": "string", "format": "uri"},
	}})
	if err == nil || !strings.Contains(err.Error(), `spec.x: the CRD converter does not know the keyword "format"`) {
		t.Errorf("error %v, want one naming spec.x and format", err)
	}
	if _, err := c.convert("spec", map[string]any{"$ref": "#/definitions/nope"}); err == nil {
		t.Error("an unknown $ref converted")
	}
}
