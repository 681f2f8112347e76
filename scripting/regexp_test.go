package scripting

import (
	"errors"
	"math"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
)

func TestRegexpSize(t *testing.T) {
	tests := []struct {
		name, pattern string
		// min and max bound the estimate, in units.
		min, max int64
		// at is where a pattern nested too deep is refused; 0 for none.
		at int
	}{
		{"empty", ``, 0, 0, 0},
		{"DNS label", `^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`, 60, 100, 0},
		{"class with an escaped bracket", `[\]a-z]{1000}`, 1000, 1000, 0},
		{"class starting with ]", `[]]`, 1, 3, 0},
		{"escapes with braces", `\u{1F600}\p{L}`, 2, 2, 0},
		{"plain characters", strings.Repeat("a", 1<<20), 1 << 20, 1 << 20, 0},
		{"repetition", `a{1000}`, 1000, 1000, 0},
		{"open repetition", `a{1000,}`, 1001, 1002, 0},
		{"ranged repetition", `a{10,1000}`, 1000, 1000, 0},
		{"not a repetition", `a{,5}b{x}`, 7, 9, 0},
		{"repeated repetitions", strings.Repeat(`a{1000}`, 1000), 1_000_000, 1_001_000, 0},
		{"nested repetition", `((a{1000}){1000}){1000}`, 1_000_000_000, 1_002_000_000, 0},
		{"huge count saturates", `(a{9007199254740993}){9007199254740993}`, math.MaxInt64 / bytesPerRegexpUnit, math.MaxInt64 / bytesPerRegexpUnit, 0},
		{"nested as deep as allowed", strings.Repeat("(", MaxRegexpNesting) + strings.Repeat(")", MaxRegexpNesting), MaxRegexpNesting, 2 * MaxRegexpNesting, 0},
		{"nested deeper", "é" + strings.Repeat("(", MaxRegexpNesting+1) + strings.Repeat(")", MaxRegexpNesting+1), 0, 0, MaxRegexpNesting + 2},
		{"parentheses in a class do not nest", "[" + strings.Repeat("(", 2*MaxRegexpNesting) + "]", 1, 1, 0},
		{"escaped parentheses do not nest", strings.Repeat(`\(`, 2*MaxRegexpNesting), 2 * MaxRegexpNesting, 2 * MaxRegexpNesting, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := regexpSize(tt.pattern)
			var re *regexpError
			switch {
			case tt.at != 0:
				if !errors.As(err, &re) || re.at != tt.at {
					t.Fatalf("regexpSize = %d, %v; want refused at character %d", n, err, tt.at)
				}
			case err != nil:
				t.Fatalf("regexpSize: %v", err)
			case n/bytesPerRegexpUnit < tt.min || n/bytesPerRegexpUnit > tt.max:
				t.Errorf("regexpSize = %d units, want %d to %d", n/bytesPerRegexpUnit, tt.min, tt.max)
			}
		})
	}
}

// TestRegexpBombsRefused compiles huge and deeply nested patterns in
// every way a script can: each is refused before it compiles, at the
// script's line, and the process allocates less than the call's limit
// during the call.
func TestRegexpBombsRefused(t *testing.T) {
	const limit = 16 << 20
	const (
		big    = `'a'.repeat(1 << 20)`
		copies = `'a{1000}'.repeat(1000)`
		deep   = `'('.repeat(100000) + 'a\\1' + ')'.repeat(100000)`
	)
	tests := []struct {
		name, expr, want string
	}{
		{"constructed", `new RegExp(` + big + `)`, "RangeError: memory limit: RegExp would allocate about "},
		{"called", `RegExp(` + copies + `, 'g')`, "RangeError: memory limit: RegExp would allocate about "},
		{"nested", `new RegExp(` + deep + `)`, "SyntaxError: Invalid regular expression: groups nested deeper than 1000 levels, at character 1001 of the pattern"},
		{"from an object", `new RegExp({toString() { return ` + big + `; }})`, "RangeError: memory limit: RegExp would allocate about "},
		{"through the prototype", `/x/.constructor(` + copies + `)`, "RangeError: memory limit: RegExp would allocate about "},
		{"subclass", `new (class extends RegExp {})(` + big + `)`, "RangeError: memory limit: RegExp would allocate about "},
		{"Reflect.construct", `Reflect.construct(RegExp, [` + big + `])`, "RangeError: memory limit: RegExp would allocate about "},
		{"compile", `/x/.compile(` + big + `)`, "RangeError: memory limit: RegExp.prototype.compile would allocate about "},
		{"match", `'x'.match(` + copies + `)`, "RangeError: memory limit: String.prototype.match would allocate about "},
		{"matchAll", `'x'.matchAll(` + big + `)`, "RangeError: memory limit: String.prototype.matchAll would allocate about "},
		{"search", `'x'.search(` + deep + `)`, "SyntaxError: Invalid regular expression: groups nested deeper than 1000 levels"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "function onAdd(obj) {\n  const v = " + tt.expr + ";\n}\n"
			r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{MemoryLimit: limit, Timeout: 30 * time.Second})
			runtime.GC()
			before := allocated()
			_, err := r.Call(addEvent)
			used := allocated() - before
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Call = %v, want a *ScriptError", err)
			}
			if !strings.HasPrefix(se.Message, tt.want) {
				t.Errorf("Message = %q, want %q…", se.Message, tt.want)
			}
			if !strings.HasPrefix(se.Position.String(), "rule.js:2:") {
				t.Errorf("Position = %q, want line 2", se.Position.String())
			}
			if se.Memory || se.Timeout {
				t.Errorf("Memory, Timeout = %v, %v; a refused pattern is an exception", se.Memory, se.Timeout)
			}
			if used > limit {
				t.Errorf("the process allocated %s during the call, over the call's limit of %s", FormatBytes(int64(used)), FormatBytes(limit))
			}
		})
	}
}

// TestRegexpLiteralBombRefused: a literal is compiled with the script, so
// Compile refuses one that would take more than DefaultMemoryLimit, at
// the literal.
func TestRegexpLiteralBombRefused(t *testing.T) {
	src := "function onAdd(obj) {\n  return  /" + strings.Repeat("a{1000}", 1000) + "/.test('a');\n}\n"
	runtime.GC()
	before := allocated()
	_, err := Compile("rule.js", src, CompileOptions{})
	used := allocated() - before
	want := "rule.js:2:11: regular expression: compiling it would allocate about "
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Compile = %v, want %q…", err, want)
	}
	if used > DefaultMemoryLimit {
		t.Errorf("Compile allocated %s", FormatBytes(int64(used)))
	}
}

func TestRegExpBehaves(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{`[new RegExp('a+').test('baa'), RegExp('b', 'g').flags, new RegExp(/a/g).flags, RegExp('x').source]`, `[true,"g","g","x"]`},
		{`[/x/ instanceof RegExp, new RegExp('x') instanceof RegExp, RegExp('x') instanceof RegExp, RegExp.prototype.constructor === RegExp]`, `[true,true,true,true]`},
		{`[RegExp.name, RegExp.length, typeof RegExp, Object.getPrototypeOf(/x/) === RegExp.prototype]`, `["RegExp",2,"function",true]`},
		{`(() => { class R extends RegExp { one() { return 1; } } const r = new R('a', 'g'); return [r instanceof R, r.one(), r.flags, 'aXa'.replace(r, '-')]; })()`, `[true,1,"g","-X-"]`},
		{`[(() => { const r = /a/; return RegExp(r) === r; })(), new RegExp({toString() { return 'q'; }}).source]`, `[true,"q"]`},
		{`['a1b2'.split(/\d/), [...'a1b2'.matchAll(/\d/g)].map(m => m[0]), [...'a1b2'.matchAll('[0-9]')].length]`, `[["a","b",""],["1","2"],2]`},
		{`['abc'.search('c'), 'abc'.search(/b/), 'abc'.match('b')[0], 'abc'.match(undefined)[0], /x/.compile('y').source]`, `[2,1,"b","",   "y"]`},
		{`(() => { try { new RegExp('('); } catch (e) { return e instanceof SyntaxError; } })()`, `true`},
		{`(() => { let n = 0; new RegExp({toString() { n++; return 'a'; }}); 'x'.search({toString() { n++; return 'x'; }}); return n; })()`, `2`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			src := "function onAdd(obj) {\n  kreact.log(JSON.stringify(" + tt.expr + "));\n}\n"
			h := newFakeHost()
			r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
			if _, err := r.Call(addEvent); err != nil {
				t.Fatalf("Call: %v", err)
			}
			if want := strings.ReplaceAll(tt.want, " ", ""); len(h.logs) != 1 || h.logs[0].Msg != want {
				t.Errorf("logged %v, want %s", h.logs, want)
			}
		})
	}
}
