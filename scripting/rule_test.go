package scripting_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// TestCompileErrorsNameTheRule: a script that does not compile is a
// diag.ErrorList placed in the rule file, each error naming the rule in
// its position and in its message, as validate prints it.
func TestCompileErrorsNameTheRule(t *testing.T) {
	rs, err := rules.Parse("broken.yaml", []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: broken
spec:
  watch:
  - resource: configmaps
  script: |
    function onAdd(obj, ctx) {
      let x = ;
    }
`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = scripting.CompileRule(rs[0])
	var list diag.ErrorList
	if !errors.As(err, &list) || len(list) != 1 {
		t.Fatalf("CompileRule = %v, want a diag.ErrorList of one error", err)
	}
	want := diag.Position{Rule: "broken", File: "broken.yaml", Line: 10, Col: 15}
	if list[0].Pos != want || list[0].Error() != `broken.yaml:10:15: rule "broken": script: Unexpected token ;` {
		t.Errorf("error at %#v: %s", list[0].Pos, list[0])
	}
}

// TestCompileRuleOncePerRule: every check and every component that needs
// a rule's program (CheckScript, CompileRule) shares one compile of the
// *rules.Rule, errors included, each caller with an error list of its
// own; a change of the script, in the rule or in a copy of it, is
// compiled again.
func TestCompileRuleOncePerRule(t *testing.T) {
	const rule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
  - resource: configmaps
  script: |
    function onAdd(obj, ctx) {
      %s
    }
`
	parse := func(name, body string) *rules.Rule {
		t.Helper()
		rs, err := rules.Parse(name+".yaml", []byte(fmt.Sprintf(rule, name, body)))
		if err != nil {
			t.Fatal(err)
		}
		return rs[0]
	}

	good := parse("good", `kreact.log("added");`)
	before := scripting.Compiles()
	checked, problems := scripting.CheckScript(good)
	if problems.Errors().Err() != nil {
		t.Fatal(problems)
	}
	for range 3 {
		prog, err := scripting.CompileRule(good)
		if err != nil {
			t.Fatal(err)
		}
		if prog != checked {
			t.Errorf("CompileRule returned another program than CheckScript's")
		}
	}
	if n := scripting.Compiles() - before; n != 1 {
		t.Errorf("a check and three CompileRule of one rule compiled %d times, want 1", n)
	}

	before = scripting.Compiles()
	broken := parse("broken", "let x = ;")
	const want = `broken.yaml:10:15: rule "broken": script: Unexpected token ;`
	for i := range 3 {
		_, err := scripting.CompileRule(broken)
		var list diag.ErrorList
		if !errors.As(err, &list) || len(list) != 1 || list[0].Error() != want {
			t.Fatalf("CompileRule #%d = %v, want %s", i+1, err, want)
		}
		list[0].Msg = "changed by a caller" // not the next caller's
	}
	if n := scripting.Compiles() - before; n != 1 {
		t.Errorf("three CompileRule of a broken rule compiled %d times, want 1", n)
	}

	before = scripting.Compiles()
	edited := *good
	edited.Script = strings.Replace(good.Script, "added", "created", 1)
	prog, err := scripting.CompileRule(&edited)
	if err != nil {
		t.Fatal(err)
	}
	if prog == checked {
		t.Errorf("an edited copy of the rule has the original's program")
	}
	if again, _ := scripting.CompileRule(good); again != checked {
		t.Errorf("the original rule lost its program to its edited copy")
	}
	good.ScriptPos.Line++
	if moved, _ := scripting.CompileRule(good); moved == checked {
		t.Errorf("a script moved in its file kept the program of its old place")
	}
	if n := scripting.Compiles() - before; n != 2 {
		t.Errorf("an edited copy and a moved script compiled %d times, want 2", n)
	}
}
