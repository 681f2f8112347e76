package docs

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/ruletest"
	"github.com/kreact/kreact/validate"
)

// TestRuleExamplesValidate checks every whole rule the user docs show (a
// YAML block with the apiVersion kreact.dev/v1alpha1 and the kind Rule or
// ClusterRule) as `kreact validate -f` checks it offline, and wants no
// problem at all, not even a warning: a reader copies them.
func TestRuleExamplesValidate(t *testing.T) {
	block := regexp.MustCompile("(?ms)^( *)```ya?ml\n(.*?)^ *```")
	rule := regexp.MustCompile(`(?m)^apiVersion: kreact\.dev/v1alpha1\n(?:.*\n)*?kind: (?:Rule|ClusterRule)$`)
	dir := t.TempDir()
	found := 0
	for _, d := range userDocs(t) {
		doc := d.text
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
			name := fmt.Sprintf("%s:%d", d.name, line)
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

// TestRuleTestExamplesPass runs the RuleTest files that testing.md shows
// as `kreact test` does, from where their paths say they are: beside the
// examples' tests, in a copy of examples/. Every case must pass.
func TestRuleTestExamplesPass(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "docs", "testing.md"))
	if err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(t.TempDir(), "examples")
	if err := os.CopyFS(examples, os.DirFS(filepath.Join(root, "examples"))); err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?ms)^```ya?ml\n(.*?)^```")
	var files []string
	for _, m := range block.FindAllStringSubmatch(string(data), -1) {
		if !strings.Contains(m[1], "\nkind: RuleTest\n") {
			continue
		}
		file := filepath.Join(examples, "tests", fmt.Sprintf("docs-example-%d.yaml", len(files)+1))
		if err := os.WriteFile(file, []byte(m[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		files = append(files, file)
	}
	if len(files) == 0 {
		t.Fatal("docs/testing.md shows no RuleTest: the block parser is broken")
	}
	var out strings.Builder
	sum, err := ruletest.Run(t.Context(), files, &out, ruletest.Options{})
	if err != nil || sum.Failed > 0 || sum.Cases == 0 {
		t.Errorf("the RuleTest examples of docs/testing.md do not pass (error %v, %d of %d cases failed):\n%s", err, sum.Failed, sum.Cases, out.String())
	}
}
