package scripting

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

// The fuzz tests of the script boundary: whatever a rule's script holds,
// and whatever the objects and strings it is handed hold, nothing may
// crash the process. A Go stack overflow is fatal, not a panic, so a
// crasher shows up as the fuzz worker dying; errors are fine. make fuzz
// runs each target for a bounded time; `go test` runs the seeds.

// fuzzTimeout bounds one handler call of a fuzzed script: long enough for
// ordinary code, short enough that an endless loop costs little.
const fuzzTimeout = 200 * time.Millisecond

// nested returns open n times, then middle, then close n times.
func nested(open, middle, close string, n int) string {
	return strings.Repeat(open, n) + middle + strings.Repeat(close, n)
}

// scriptSeeds are ordinary scripts and the shapes that used to overflow the
// Go stack: deep brackets, parentheses, blocks, operators and template
// literals, past MaxNesting and just within it.
func scriptSeeds() []string {
	seeds := []string{
		"",
		"function onAdd(obj, ctx) { kreact.log(obj.metadata.name); }",
		`function onUpdate(oldObj, obj, ctx) {
  if (obj.spec.replicas !== oldObj.spec.replicas) {
    kreact.patch(obj, {metadata: {annotations: {"example.com/changed": String(ctx.changed.length)}}});
  }
}
function onDelete(obj) { kreact.log("gone", {name: obj.metadata.name}); }
function onTick(ctx) { for (const o of kreact.list("configmaps")) kreact.log(o.metadata.name); }
function onTimer(obj) { kreact.after(obj, "1m"); }`,
		"const x = JSON.parse('" + nested("[", "", "]", 2000) + "'); function onAdd() {}",
		"function onAdd(obj) { obj.metadata.name = 'x'; }",
		"function onAdd() { eval('1'); }",
		"function onAdd() { new Function('return 1')(); }",
		"function onAdd() { 'x'.repeat(1 << 30); }",
		"function onAdd() { Array(1e9).fill(0); }",
		"function onAdd() { function f(n) { return f(n + 1); } f(0); }",
		"function onAdd() { while (true) {} }",
		"function onAdd() { /(a+)+$/.test('a'.repeat(30) + 'b'); }",
		"function onAdd(obj) { Object.setPrototypeOf(obj, {}); }",
		"let a: number = 1; function onAdd(obj: any): void { kreact.log(a); }",
		"type X = {a: number}; // only types",
		"//# sourceMappingURL=/etc/hostname\nfunction onAdd() {}",
		"function onAdd() { throw {toString() { throw new Error('x'); }}; }",
		"`${`${`${1}`}`}`; function onAdd() {}",
		"function onAdd() { (",
		"export const s = `\nexport function f() {}`; export async function onAdd() {}\nexport { s as t };",
		"\x00\xff\xfe",
	}
	for _, n := range []int{MaxNesting - 10, MaxNesting + 1, 20_000} {
		seeds = append(seeds,
			"const x = "+nested("[", "", "]", n)+";",
			"const x = "+nested("(", "1", ")", n)+";",
			nested("{", "", "}", n),
			"const x = "+strings.Repeat("!", n)+"1;",
			"const x = "+nested("{a:", "1", "}", n)+";",
			"const x = "+strings.Repeat("a ? b : ", n)+"c;",
			"const f = "+strings.Repeat("a => ", n)+"1;",
			"const x = "+nested("`${", "", "}`", n)+";",
			"const x = "+nested("f(", "", ")", n)+";",
			"const x = 1"+strings.Repeat(" + 1", n)+";",
		)
	}
	return seeds
}

// FuzzCompile: Compile returns a Program or a positioned error; a Program
// then runs its top level and every handler, each within its timeout,
// without crashing the process.
func FuzzCompile(f *testing.F) {
	for _, s := range scriptSeeds() {
		f.Add(s, false)
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, src string, typescript bool) {
		p, err := Compile("fuzz.js", src, CompileOptions{LineOffset: 2, ColumnOffset: 4, TypeScript: typescript})
		if err != nil {
			var list diag.ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("Compile = %#v (%v), want a diag.ErrorList", err, err)
			}
			for _, e := range list {
				if e.Pos.File != "fuzz.js" || e.Pos.Line < 1 || e.Msg == "" {
					t.Fatalf("Compile = %v: an error without a position", err)
				}
			}
			return
		}
		r, err := NewRuntime(p, newFakeHost(), RuntimeOptions{Rule: "fuzz", Timeout: fuzzTimeout})
		if err != nil {
			return
		}
		defer r.Close()
		obj := deployment("default", "web", 2)
		for _, ev := range []event.Event{
			{Type: event.Add, Object: obj, Resource: deployments},
			{Type: event.Update, OldObject: obj, Object: deployment("default", "web", 3), Changed: []string{"spec.replicas"}, Resource: deployments},
			{Type: event.Delete, Object: obj, Resource: deployments},
			{Type: event.Tick},
			{Type: event.Timer, Object: obj, Resource: deployments},
		} {
			if _, err := r.Invoke(ev); errors.Is(err, event.ErrStuck) {
				return
			}
		}
	})
}

// TestTypeScriptWithoutCode: a TypeScript script of only types, comments
// or directives, found by FuzzCompile, compiles to a Program without
// handlers rather than failing on the empty source map.
func TestTypeScriptWithoutCode(t *testing.T) {
	for _, src := range []string{"", "// nothing\n", "type X = {a: number};\ninterface Y { b: string }\n", "('')", "'use strict';"} {
		p, err := Compile("empty.ts", src, CompileOptions{TypeScript: true, LineOffset: 3})
		if err != nil {
			t.Errorf("Compile(%q) = %v", src, err)
			continue
		}
		if p.HasHandler(event.Add) || p.HasHandler(event.Tick) {
			t.Errorf("Compile(%q) has handlers", src)
		}
	}
}

// TestTypeScriptErrorAtFirstCharacter: a TypeScript compile error at the
// script's first character, found by FuzzCompile, is placed there rather
// than at line 0.
func TestTypeScriptErrorAtFirstCharacter(t *testing.T) {
	_, err := Compile("first.ts", "return", CompileOptions{TypeScript: true, LineOffset: 3, ColumnOffset: 4})
	if err == nil || err.Error() != "first.ts:4:5: Illegal return statement" {
		t.Errorf("Compile = %v, want first.ts:4:5: Illegal return statement", err)
	}
}

// handlerInputScript hands what it is given to everything that takes
// values from outside: JSON.parse of a string field, reading every field of
// the read-only view, JSON.stringify, kreact.clone, and actions whose
// arguments are converted back to Go.
const handlerInputScript = `
function walk(v, depth) {
  if (depth > 200 || v === null || typeof v !== "object") return 0;
  let n = 1;
  for (const k of Object.keys(v)) n += walk(v[k], depth + 1);
  return n;
}
function onAdd(obj, ctx) {
  walk(obj, 0);
  JSON.stringify(obj);
  const copy = kreact.clone(obj);
  let v = null;
  try { v = JSON.parse(obj.data && obj.data.text); } catch (e) { kreact.log(String(e)); }
  walk(v, 0);
  JSON.stringify(v);
  const target = {resource: "configmaps", namespace: "default", name: "fuzz"};
  kreact.patch(target, {metadata: {annotations: {"example.com/seen": String(walk(copy, 0))}}});
  try { kreact.patch(target, {data: {v: v}}); } catch (e) { kreact.log(String(e)); }
  try { kreact.patch(obj, {data: {v: v}}); } catch (e) { kreact.log(String(e)); }
  try { kreact.apply(v); } catch (e) { kreact.log(String(e)); }
  try { kreact.apply(obj); } catch (e) { kreact.log(String(e)); }
}
`

// FuzzHandlerInput: a fixed handler given a fuzzed object (JSON, as an
// informer would decode it) and a fuzzed string to JSON.parse never
// crashes the process; the call may fail.
func FuzzHandlerInput(f *testing.F) {
	seeds := []struct{ object, text string }{
		{`{"metadata": {"name": "a", "namespace": "default"}}`, `{"a": [1, 2, {"b": null}]}`},
		{`{"metadata": {"name": "a"}, "data": {"k": "v"}}`, `"\ud800"`},
		{`{}`, ``},
		{`{"spec": ` + nested(`{"a":`, `1`, `}`, 5000) + `}`, nested("[", "", "]", 100_000)},
		{`{"spec": ` + nested(`[`, ``, `]`, 5000) + `}`, nested(`{"a":`, `1`, `}`, 999)},
		{`{"spec": {"x": 1e308, "y": -0, "z": 123456789012345678901234567890}}`, `[1e400, -1e400]`},
		{`{"metadata": {"name": ` + `"` + strings.Repeat("x", 10_000) + `"` + `}}`, `"` + nested("[", "", "]", 50_000) + `"`},
		{`{"data": {"inner": "{\"a\": \"[[[[\"}"}}`, `"{\"a\": \"{\\\"b\\\": [[[1]]]}\"}"`},
		{`not json`, `{"__proto__": {"x": 1}, "constructor": {"prototype": {}}}`},
		{`{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "n"}}`, `{"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "n"}}`},
	}
	for _, s := range seeds {
		f.Add(s.object, s.text)
	}
	p, err := Compile("fuzz.js", handlerInputScript, CompileOptions{})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, object, text string) {
		// Errors are fine: the object may be anything, and apply refuses
		// what is not an object of a known kind.
		_, _ = callWithInput(t, p, object, text)
	})
}

// callWithInput calls the onAdd of p with the object decoded from the JSON
// object (an empty one if it does not decode), with data.text set to text.
func callWithInput(t *testing.T, p *Program, object, text string) ([]actions.Action, error) {
	var m map[string]any
	if json.Unmarshal([]byte(object), &m) != nil || m == nil {
		m = map[string]any{}
	}
	data, _ := m["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
		m["data"] = data
	}
	data["text"] = text
	r, err := NewRuntime(p, newFakeHost(), RuntimeOptions{Rule: "fuzz", Timeout: time.Second})
	if err != nil {
		t.Fatalf("NewRuntime: %v", err)
	}
	defer r.Close()
	return r.Call(event.Event{Type: event.Add, Object: &unstructured.Unstructured{Object: m}, Resource: configMaps})
}

// TestHandlerInputScriptRuns: on an ordinary object, the script of
// FuzzHandlerInput gets through every step, so the fuzzer exercises them.
func TestHandlerInputScriptRuns(t *testing.T) {
	p, err := Compile("fuzz.js", handlerInputScript, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := callWithInput(t, p, `{"metadata": {"name": "a", "namespace": "default"}}`, `{"a": [1, 2, {"b": null}]}`)
	if err != nil || len(got) != 2 {
		t.Fatalf("Call = %d actions, %v; want the two patches", len(got), err)
	}
	if _, err := callWithInput(t, p, `{}`, nested("[", "", "]", MaxJSONNesting+1)); err != nil {
		t.Fatalf("Call = %v; want JSON.parse's error caught by the script", err)
	}
}
