package scripting

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/diag"
)

// Sources that used to overflow the Go stack in the parser, which kills
// the process: each must be an error with a position, quickly.
func TestDeepSourceIsAnError(t *testing.T) {
	const n = 1_000_000
	tests := []struct {
		name, src string
	}{
		{"arrays", "const x = " + strings.Repeat("[", n) + strings.Repeat("]", n) + ";"},
		{"parentheses", "const x = " + strings.Repeat("(", n) + "1" + strings.Repeat(")", n) + ";"},
		{"blocks", strings.Repeat("{", n) + strings.Repeat("}", n)},
		{"prefix operators", "const x = " + strings.Repeat("!", n) + "1;"},
		{"assignments", "let a; " + strings.Repeat("a = ", n) + "1;"},
		{"conditionals", "const x = " + strings.Repeat("a ? b : ", n) + "c;"},
		{"arrows", "const f = " + strings.Repeat("a => ", n) + "1;"},
		{"template literals", "const x = " + strings.Repeat("`${", n) + strings.Repeat("}`", n) + ";"},
		{"too large", "// " + strings.Repeat("x", MaxSourceSize)},
	}
	for _, tt := range tests {
		for _, ts := range []bool{false, true} {
			name := tt.name
			if ts {
				name += " (TypeScript)"
			}
			t.Run(name, func(t *testing.T) {
				start := time.Now()
				_, err := Compile("deep.js", tt.src, CompileOptions{TypeScript: ts, LineOffset: 2, ColumnOffset: 4})
				var e *diag.Error
				if !errors.As(err, &e) || e.Pos.File != "deep.js" || e.Pos.Line < 3 {
					t.Fatalf("Compile = %v, want a positioned error", err)
				}
				if !strings.Contains(e.Msg, "deeper than") && !strings.Contains(e.Msg, "over the limit") {
					t.Errorf("message = %q", e.Msg)
				}
				if d := time.Since(start); d > 5*time.Second {
					t.Errorf("took %v", d)
				}
			})
		}
	}
}

func TestOrdinaryNestingCompiles(t *testing.T) {
	src := `function onUpdate(oldObj, obj, ctx) {
  const a = !!(obj.metadata.labels && obj.metadata.labels["x"] === "y" ? -1 : +2);
  const f = (x) => (y) => ({k: [x, y, ` + "`t${x + `${y}`}`" + `]});
  let i = 0; i += 1; i++; i--; i -= 1; i = i === 0 ? i : i;
  // a comment with ((((((( and "quotes
  /* and [[[[[[[ */
  const s = "((((((((((" + '[[[[[[[[' + "\"";
  return f(a)(s);
}
let v;
` + strings.Repeat("v = ((((((((((1))))))))));\n", 1000)
	if _, err := Compile("ok.js", src, CompileOptions{}); err != nil {
		t.Fatal(err)
	}
}

func TestJSONParseIsBounded(t *testing.T) {
	src := `function onAdd(obj) {
  const deep = "[".repeat(10000000) + "]".repeat(10000000);
  const out = [];
  try { JSON.parse(deep); out.push("parsed"); } catch (e) { out.push(e.name + ": " + e.message); }
  try { JSON.parse("{bad"); } catch (e) { out.push(e.name); }
  out.push(JSON.parse('{"a": [1, {"b": 2}]}', (k, v) => v).a[1].b);
  kreact.log(out.join(" | "));
}`
	h := newFakeHost()
	// The 40 MB of strings the call builds count towards its limit, and
	// under the race detector so does its shadow of them.
	r := mustRuntime(t, "json.js", src, h, RuntimeOptions{Timeout: 10 * time.Second, MemoryLimit: 512 << 20})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	want := "TypeError: JSON.parse: the text nests deeper than 1000 levels | SyntaxError | 2"
	if got := h.messages(); len(got) != 1 || got[0] != want {
		t.Errorf("logs = %q, want %q", got, want)
	}
}
