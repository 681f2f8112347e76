package rules

import (
	"errors"
	"testing"

	"github.com/kreact/kreact/diag"
)

// TestCompiled: Compiled runs compile once per rule and script, keeps its
// error as well as its value, and runs it again when any field the script
// is compiled from changes; a copy keeps what was made until its own
// script changes.
func TestCompiled(t *testing.T) {
	runs := 0
	compile := func(v string, err error) func() (any, error) {
		return func() (any, error) { runs++; return v, err }
	}
	r := &Rule{Script: "a", ScriptPos: diag.Position{File: "f.yaml", Line: 3, Col: 5}}
	for range 2 {
		if v, err := r.Compiled(compile("first", nil)); v != "first" || err != nil {
			t.Errorf("Compiled = %v, %v; want first", v, err)
		}
	}
	if runs != 1 {
		t.Errorf("compile ran %d times for one rule, want 1", runs)
	}

	tests := []struct {
		name string
		edit func(*Rule)
	}{
		{"script", func(r *Rule) { r.Script = "b" }},
		{"script file", func(r *Rule) { r.ScriptFile = "s.js" }},
		{"language", func(r *Rule) { r.ScriptLang = ScriptTypeScript }},
		{"position", func(r *Rule) { r.ScriptPos.Col++ }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := *r
			tt.edit(&c)
			runs = 0
			if v, _ := c.Compiled(compile("edited", nil)); v != "edited" || runs != 1 {
				t.Errorf("an edited copy: Compiled = %v after %d runs, want edited after 1", v, runs)
			}
			if v, _ := r.Compiled(compile("unused", nil)); v != "first" || runs != 1 {
				t.Errorf("the original after its copy's edit: Compiled = %v after %d runs, want first after 1", v, runs)
			}
		})
	}

	failed := errors.New("does not compile")
	broken := &Rule{Script: "x"}
	runs = 0
	for range 2 {
		if _, err := broken.Compiled(compile("", failed)); err != failed {
			t.Errorf("Compiled error = %v, want %v", err, failed)
		}
	}
	if runs != 1 {
		t.Errorf("compile of a broken script ran %d times, want 1", runs)
	}
	// Fields outside the script leave the program as it is: they do not
	// reach the compiler.
	broken.Workers, broken.Name = 4, "renamed"
	if _, err := broken.Compiled(compile("", nil)); err != failed || runs != 1 {
		t.Errorf("a change outside the script compiled again (%d runs, error %v)", runs, err)
	}
}
