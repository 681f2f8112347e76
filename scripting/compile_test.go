package scripting

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

func TestCompileSyntaxErrors(t *testing.T) {
	tests := []struct {
		name string
		src  string
		opts CompileOptions
		want []string // Error() of each problem
	}{
		{
			name: "parse error",
			src:  "function onAdd(obj) {\n  let x = ;\n}\n",
			want: []string{"rule.js:2:11: Unexpected token ;"},
		},
		{
			name: "parse error with line offset",
			src:  "function onAdd(obj) {\n  let x = ;\n}\n",
			opts: CompileOptions{LineOffset: 10},
			want: []string{"rule.js:12:11: Unexpected token ;"},
		},
		{
			name: "parse error with line and column offsets",
			src:  "function onAdd(obj) {\n  let x = ;\n}\n",
			opts: CompileOptions{LineOffset: 10, ColumnOffset: 4},
			want: []string{"rule.js:12:15: Unexpected token ;"},
		},
		{
			name: "error on the first line takes the column offset too",
			src:  "let = 1;\n",
			opts: CompileOptions{LineOffset: 3, ColumnOffset: 6},
			want: []string{"rule.js:4:7: Unexpected strict mode reserved word"},
		},
		{
			name: "end of input is not indented",
			src:  "function f() {\n  let x = 1;\n",
			opts: CompileOptions{LineOffset: 3, ColumnOffset: 6},
			want: []string{"rule.js:6:1: Unexpected end of input"},
		},
		{
			name: "compiler error",
			src:  "let a = 1;\nlet a = 2;\n",
			want: []string{"rule.js:2:5: Identifier 'a' has already been declared"},
		},
		{
			name: "compiler error with offsets",
			src:  "let a = 1;\nlet a = 2;\n",
			opts: CompileOptions{LineOffset: 7, ColumnOffset: 2},
			want: []string{"rule.js:9:7: Identifier 'a' has already been declared"},
		},
		{
			name: "strict mode",
			src:  "function onAdd(obj) {\n  with (obj) {}\n}\n",
			want: []string{"rule.js:2:3: Strict mode code may not include a with statement"},
		},
		{
			name: "several problems",
			src:  "if (a) {\n} else }\nif (b) {\n} else }\n",
			want: []string{"rule.js:2:8: Unexpected token }", "rule.js:4:8: Unexpected token }"},
		},
		{
			// goja compiles a literal whose value is discarded only
			// when it runs, and then never.
			name: "invalid regular expression literals, wherever they are",
			src:  "function onAdd(obj) {\n  if (obj) /(/;\n  (/[b-a]/, 1);\n}\n",
			opts: CompileOptions{LineOffset: 3, ColumnOffset: 2},
			want: []string{"rule.js:5:14: invalid regular expression /(/: Unterminated group",
				"rule.js:6:6: invalid regular expression /[b-a]/: Invalid regular expression (re2): [b-a] (error parsing regexp: invalid character class range: `b-a`)"},
		},
		{
			name: "a regular expression with bad flags",
			src:  "const re = /a/gg;\nfunction onAdd() {}\n",
			want: []string{"rule.js:1:12: invalid regular expression /a/gg: Invalid flags supplied to RegExp constructor 'gg'"},
		},
		{
			name: "handlers that are not functions",
			src:  "var onAdd = 5;\nlet onUpdate;\nconst onDelete = cond ? \"a\" : {};\nlet onTick = `t`;\n",
			want: []string{"rule.js:1:5: onAdd is declared but is not a function",
				"rule.js:2:5: onUpdate is declared but is not a function",
				"rule.js:3:7: onDelete is declared but is not a function",
				"rule.js:4:5: onTick is declared but is not a function"},
		},
		{
			name: "a var that overwrites a function declaration",
			src:  "function onAdd() {}\nvar onAdd = -1;\n",
			want: []string{"rule.js:2:5: onAdd is declared but is not a function"},
		},
		{
			name: "a const mentioned again is still not a function",
			src:  "const onAdd = null;\nkreact.log(onAdd);\n",
			want: []string{"rule.js:1:7: onAdd is declared but is not a function"},
		},
		{
			name: "all problems at once",
			src:  "var onAdd = 5;\nfunction onUpdate() { /(/; }\nlet a = 1;\nlet a = 2;\n",
			want: []string{"rule.js:1:5: onAdd is declared but is not a function",
				"rule.js:2:23: invalid regular expression /(/: Unterminated group",
				"rule.js:4:5: Identifier 'a' has already been declared"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile("rule.js", tt.src, tt.opts)
			if err == nil {
				t.Fatal("Compile succeeded")
			}
			var got []string
			var list diag.ErrorList
			var one *diag.Error
			switch {
			case errors.As(err, &list):
				for _, e := range list {
					got = append(got, e.Error())
				}
			case errors.As(err, &one):
				got = []string{one.Error()}
			default:
				t.Fatalf("error %T %v is neither *Error nor ErrorList", err, err)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if !errors.As(err, &one) || one.Error() != tt.want[0] {
				t.Errorf("errors.As(*Error) = %v, want the first problem %s", one, tt.want[0])
			}
		})
	}
}

// inlineScript extracts the block scalar under "script: |" from a YAML
// file, the way a rule loader would, and returns it with its offsets.
func inlineScript(t *testing.T, yaml string) (string, CompileOptions) {
	t.Helper()
	lines := strings.Split(yaml, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) != "script: |" {
			continue
		}
		keyIndent := len(l) - len(strings.TrimLeft(l, " "))
		indent := -1
		var body []string
		for _, b := range lines[i+1:] {
			n := len(b) - len(strings.TrimLeft(b, " "))
			if strings.TrimSpace(b) != "" && n <= keyIndent {
				break
			}
			if indent < 0 && strings.TrimSpace(b) != "" {
				indent = n
			}
			body = append(body, strings.TrimPrefix(b, strings.Repeat(" ", indent)))
		}
		return strings.Join(body, "\n"), CompileOptions{LineOffset: i + 1, ColumnOffset: indent}
	}
	t.Fatal("no script block")
	return "", CompileOptions{}
}

// TestInlineScriptPositions checks positions against the YAML file itself:
// each expected position is where the token is in the file.
func TestInlineScriptPositions(t *testing.T) {
	const file = "testdata/inline-rule.yaml"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(raw)
	src, opts := inlineScript(t, yaml)
	p, err := Compile(file, src, opts)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name       string
		annotation string
		want       string // the token the position must point at
		stack      string
	}{
		{"throw", "boom", "new Error", "at onUpdate (" + position(file, yaml, "new Error") + ")"},
		{"json validation", "nan", `(newObj, {spec: {replicas: Number`, "at patch (native)\nat onUpdate (" + position(file, yaml, `(newObj, {spec`) + ")"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := NewRuntime(p, newFakeHost(), RuntimeOptions{Rule: "scale-from-annotation"})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			obj := deployment("default", "web", 1)
			obj.SetAnnotations(map[string]string{"example.com/replicas": tt.annotation})
			_, err = r.Call(event.Event{Type: event.Update, OldObject: obj, Object: obj, Resource: deployments})
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Call = %v, want a *ScriptError", err)
			}
			if want := position(file, yaml, tt.want); se.Position.String() != want {
				t.Errorf("Position = %s, want %s", se.Position.String(), want)
			}
			if se.Stack != tt.stack {
				t.Errorf("Stack =\n%s\nwant\n%s", se.Stack, tt.stack)
			}
		})
	}
}

func TestInlineSyntaxErrorPosition(t *testing.T) {
	const file = "testdata/inline-syntax-error.yaml"
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	yaml := string(raw)
	src, opts := inlineScript(t, yaml)
	_, err = Compile(file, src, opts)
	var e *diag.Error
	if !errors.As(err, &e) {
		t.Fatalf("Compile = %v, want a *diag.Error", err)
	}
	if got, want := e.Error(), position(file, yaml, ") {\n        }")+": Unexpected token )"; got != want {
		t.Errorf("error = %s, want %s", got, want)
	}
}

func TestHasHandler(t *testing.T) {
	tests := []struct {
		src  string
		want []event.Type
	}{
		{"function onAdd(obj, ctx) {}", []event.Type{event.Add}},
		{"var onUpdate = function (o, n, ctx) {};\nconst onDelete = (obj) => {};", []event.Type{event.Update, event.Delete}},
		{"let onAdd = async function () {};\nfunction onUpdate() {}\nfunction onDelete() {}", []event.Type{event.Add, event.Update, event.Delete}},
		{"function onTick(ctx) {}", []event.Type{event.Tick}},
		{"function helper() { function onAdd() {} }", nil},
		{"", nil},
	}
	for _, tt := range tests {
		p, err := Compile("rule.js", tt.src, CompileOptions{})
		if err != nil {
			t.Fatalf("%q: %v", tt.src, err)
		}
		for _, typ := range []event.Type{event.Add, event.Update, event.Delete, event.Tick} {
			want := false
			for _, w := range tt.want {
				want = want || w == typ
			}
			if got := p.HasHandler(typ); got != want {
				t.Errorf("%q: HasHandler(%s) = %v, want %v", tt.src, typ, got, want)
			}
		}
	}
}

// TestHandlersThatMayBeFunctionsCompile: a handler whose value is not
// known before the script runs is left to NewRuntime; Compile refuses only
// values that can never be functions.
func TestHandlersThatMayBeFunctionsCompile(t *testing.T) {
	for _, src := range []string{
		"function onAdd() {}",
		"const onAdd = (obj) => {};",
		"const onAdd = make();",
		"const onAdd = flag ? () => {} : 5;",
		"const onAdd = opts.handler || null;",
		"var onAdd = 5;\nonAdd = function () {};",
		"let onAdd;\n({onAdd} = handlers);",
		"function onAdd() {}\nvar onAdd;",
		"const onTick = class {};",
		"function f() { var onAdd = 5; }",
		"const re = /a(?=b)/;\nfunction onAdd() { return /(x)\\1/.test('xx'); }",
	} {
		if _, err := Compile("rule.js", src, CompileOptions{}); err != nil {
			t.Errorf("%q: %v", src, err)
		}
	}
}

func TestHandlerNotAFunction(t *testing.T) {
	p, err := Compile("rule.js", "const onAdd = (() => 42)();", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewRuntime(p, newFakeHost(), RuntimeOptions{Rule: "r"})
	var se *event.ScriptError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "onAdd is declared but is not a function") {
		t.Fatalf("NewRuntime = %v, want a ScriptError about onAdd", err)
	}
}

func TestTopLevelError(t *testing.T) {
	src := "const x = 1;\nnull.y;\nfunction onAdd() {}"
	p, err := Compile("rule.js", src, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewRuntime(p, newFakeHost(), RuntimeOptions{Rule: "r"})
	var se *event.ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("NewRuntime = %v, want a *ScriptError", err)
	}
	if se.Handler != "" || se.Position.String() != "rule.js:2:6" {
		t.Errorf("Handler, Position = %q, %q; want top level at rule.js:2:6", se.Handler, se.Position.String())
	}
	if !strings.Contains(se.Error(), "(rule r, top level)") {
		t.Errorf("Error() = %q", se.Error())
	}
}
