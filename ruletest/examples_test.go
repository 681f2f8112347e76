package ruletest

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/kreact/kreact/rules"
)

// TestEveryExampleRuleHasATest checks that examples/tests covers every rule
// in examples/. (`kreact test examples/tests` runs them; see cmd/kreact.)
func TestEveryExampleRuleHasATest(t *testing.T) {
	rs, err := rules.Load("../examples")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../examples/tests/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var tested []string
	for _, file := range files {
		f, err := LoadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		tested = append(tested, f.Rules()...)
	}
	for _, r := range rs {
		if !slices.Contains(tested, r.Name) {
			t.Errorf("example rule %q (%s) has no test in examples/tests", r.Name, r.Source)
		}
	}
}
