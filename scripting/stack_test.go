package scripting

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/kreact/kreact/event"
)

var update = flag.Bool("update", false, "rewrite testdata/stacks.golden")

// TestCollapsedStacksGolden records the stacks of deep recursion, plain and
// through a built-in and through two functions, as the logs show them:
// repeated frames folded, a few lines each.
func TestCollapsedStacksGolden(t *testing.T) {
	src := `function down(n) { return down(n + 1) + 1; }
function viaNative(n) { return [n].map(viaNative); }
function ping(n) { return pong(n + 1); }
function pong(n) { return ping(n + 1); }
function onAdd(obj) {
  if (obj.metadata.name === "direct") down(0);
  if (obj.metadata.name === "native") viaNative(0);
  if (obj.metadata.name === "mutual") ping(0);
}`
	r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{})
	var b strings.Builder
	for _, name := range []string{"direct", "native", "mutual"} {
		_, err := r.Call(event.Event{Type: event.Add, Object: deployment("default", name, 1), Resource: deployments})
		var se *event.ScriptError
		if !errors.As(err, &se) {
			t.Fatalf("%s: Call = %v, want a ScriptError", name, err)
		}
		if len(se.Stack) > 1024 {
			t.Errorf("%s: stack of %d bytes, want at most 1 KiB", name, len(se.Stack))
		}
		fmt.Fprintf(&b, "== %s: %s\n%s\n", name, se.Message, se.Stack)
	}
	const golden = "testdata/stacks.golden"
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -run TestCollapsedStacksGolden -update to create it)", err)
	}
	if b.String() != string(want) {
		t.Errorf("stacks differ from %s (run with -update to accept)\ngot:\n%s\nwant:\n%s", golden, b.String(), want)
	}
}

func TestCollapseStack(t *testing.T) {
	rep := func(n int, lines ...string) []string {
		var out []string
		for range n {
			out = append(out, lines...)
		}
		return out
	}
	tests := []struct {
		name string
		in   []string
		want []string
	}{
		{"empty", nil, nil},
		{"distinct", []string{"a", "b", "c"}, []string{"a", "b", "c"}},
		{"twice", []string{"a", "a", "b"}, []string{"a", "… 1 more frames of a", "b"}},
		{"run", append(rep(1021, "at f (x.js:3:5)"), "at onAdd (x.js:9:1)"),
			[]string{"at f (x.js:3:5)", "… 1,020 more frames of f (x.js:3:5)", "at onAdd (x.js:9:1)"}},
		{"cycle of two", append([]string{"x"}, rep(5, "at f (1)", "at g (2)")...),
			[]string{"x", "at f (1)", "at g (2)", "… 8 more frames of f (1), g (2)"}},
		{"cycle longer than the period folds by lines",
			rep(3, "a", "b", "c", "d", "e", "f", "g", "h", "i"),
			rep(3, "a", "b", "c", "d", "e", "f", "g", "h", "i")[:keepInner:keepInner]},
	}
	tests[len(tests)-1].want = append(tests[len(tests)-1].want, "… 5 more lines", "d", "e", "f", "g", "h", "i")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := collapseStack(tt.in); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("collapseStack =\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	if got := thousands(1234567); got != "1,234,567" {
		t.Errorf("thousands = %q", got)
	}
}
