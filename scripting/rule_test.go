package scripting_test

import (
	"errors"
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
