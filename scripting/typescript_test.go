package scripting

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

const tsScript = `interface Labels { [key: string]: string }

function labelsOf(obj: any): Labels {
  return obj.metadata.labels ?? {};
}

function onAdd(obj: any, ctx: any): void {
  const labels: Labels = labelsOf(obj);
  if (labels["fail"] === "yes") {
    throw new Error("failing on purpose");
  }
  kreact.patch(obj, {metadata: {labels: {seen: "true"}}});
}
`

func TestTypeScriptRunsAndPointsIntoTheSource(t *testing.T) {
	p, err := Compile("rule.ts", tsScript, CompileOptions{TypeScript: true})
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasHandler(event.Add) {
		t.Fatal("onAdd not found in the TypeScript script")
	}
	r := mustRuntimeProgram(t, p, newFakeHost(), RuntimeOptions{Rule: "ts"})
	got, err := r.Call(addEvent)
	if err != nil {
		t.Fatalf("Call = %v", err)
	}
	if len(got) != 1 || got[0].Origin.String() != "rule.ts:12:10" {
		t.Errorf("actions = %+v, want one patch from rule.ts:12:10", got)
	}

	ev := addEvent
	ev.Object = addEvent.Object.DeepCopy()
	ev.Object.SetLabels(map[string]string{"fail": "yes"})
	_, err = r.Call(ev)
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Position.String() != "rule.ts:10:11" || !strings.Contains(se.Message, "failing on purpose") {
		t.Fatalf("error = %v, want it at rule.ts:10:11", err)
	}
	if !strings.Contains(se.Stack, "at onAdd (rule.ts:10:11)") {
		t.Errorf("stack = %q, want frames in rule.ts", se.Stack)
	}
}

// An inline script in YAML: the block starts on line 9 of the file and is
// indented by 4 spaces.
func TestTypeScriptInlineOffsets(t *testing.T) {
	p, err := Compile("rule.yaml", tsScript, CompileOptions{TypeScript: true, LineOffset: 8, ColumnOffset: 4})
	if err != nil {
		t.Fatal(err)
	}
	r := mustRuntimeProgram(t, p, newFakeHost(), RuntimeOptions{})
	got, err := r.Call(addEvent)
	if err != nil || len(got) != 1 || got[0].Origin.String() != "rule.yaml:20:14" {
		t.Errorf("Call = %+v, %v; want a patch from rule.yaml:20:14", got, err)
	}
}

func TestTypeScriptSyntaxErrors(t *testing.T) {
	_, err := Compile("rule.yaml", "function onAdd(obj: any) {\n  let x: = 1;\n}\n", CompileOptions{TypeScript: true, LineOffset: 8, ColumnOffset: 4})
	var e *diag.Error
	if !errors.As(err, &e) || e.Pos != (diag.Position{File: "rule.yaml", Line: 10, Col: 14}) {
		t.Fatalf("Compile = %v, want an error at rule.yaml:10:14, the \"=\"", err)
	}
}

func mustRuntimeProgram(t testing.TB, p *Program, host Host, opts RuntimeOptions) *Runtime {
	t.Helper()
	r, err := NewRuntime(p, host, opts)
	if err != nil {
		t.Fatalf("NewRuntime: %v", err)
	}
	t.Cleanup(r.Close)
	return r
}
