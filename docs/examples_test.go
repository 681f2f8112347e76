package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/validate"
)

// TestRuleExamplesValidate checks every whole rule the user docs show (a
// YAML block with the apiVersion kreact.dev/v1alpha1 and the kind Rule or
// ClusterRule) as `kreact validate -f` checks it offline, and wants no
// problem at all, not even a warning: a reader copies them.
func TestRuleExamplesValidate(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, filepath.Join(root, "README.md"))
	block := regexp.MustCompile("(?ms)^( *)```ya?ml\n(.*?)^ *```")
	rule := regexp.MustCompile(`(?m)^apiVersion: kreact\.dev/v1alpha1\n(?:.*\n)*?kind: (?:Rule|ClusterRule)$`)
	dir := t.TempDir()
	found := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(data)
		for _, m := range block.FindAllStringSubmatchIndex(doc, -1) {
			indent := doc[m[2]:m[3]]
			body := doc[m[4]:m[5]]
			var lines []string
			for _, l := range strings.Split(body, "\n") {
				lines = append(lines, strings.TrimPrefix(l, indent))
			}
			body = strings.Join(lines, "\n")
			if !rule.MatchString(body) {
				continue
			}
			found++
			line := strings.Count(doc[:m[4]], "\n") + 1
			name := fmt.Sprintf("%s:%d", filepath.ToSlash(f[len(root)+1:]), line)
			file := filepath.Join(dir, fmt.Sprintf("example-%d.yaml", found))
			if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
			in := cmdline.InputFlags{Files: []string{file}}
			paths, mapper, _, err := in.Load(t.Context(), "kreact-docs-test")
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			r, err := validate.Check(t.Context(), paths, mapper, validate.Options{})
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, p := range r.Problems {
				t.Errorf("%s: the example rule does not validate cleanly: %v", name, p)
			}
			if len(r.Resolved) == 0 {
				t.Errorf("%s: no rule of the example resolved", name)
			}
		}
	}
	if found < 3 {
		t.Errorf("only %d example rules found in the docs: the block parser is broken", found)
	}
}
