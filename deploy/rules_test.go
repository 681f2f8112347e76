package deploy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kreact/kreact/rules"
)

// TestDeployedRulesAreValid loads deploy/rules/ as kreact run -f would.
func TestDeployedRulesAreValid(t *testing.T) {
	rs, err := rules.Load("rules")
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) == 0 {
		t.Fatal("deploy/rules holds no rule")
	}
	// Every file there must be packed into the ConfigMap.
	kustomization, err := os.ReadFile("kustomization.yaml")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join("rules", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !strings.Contains(string(kustomization), "- "+filepath.ToSlash(f)+"\n") {
			t.Errorf("%s is not listed in kustomization.yaml's configMapGenerator", f)
		}
	}
}
