package scripting

import (
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
)

// TestBuiltinsRefusedOverMemoryLimit checks that the built-ins that build a
// large value in one step are refused before they allocate, with a
// RangeError at the script line that called them.
func TestBuiltinsRefusedOverMemoryLimit(t *testing.T) {
	tests := []struct {
		name, expr, what string
	}{
		{"repeat", `'x'.repeat(1 << 30)`, "String.prototype.repeat"},
		// The first step stays far below the limit: the watchdog charges
		// a call with the memory its thread takes, under the race
		// detector its shadow memory too.
		{"repeat of a long string", `'x'.repeat(1 << 14).repeat(1 << 8)`, "String.prototype.repeat"},
		{"padStart", `'x'.padStart(1e9)`, "String.prototype.padStart"},
		{"padEnd", `'x'.padEnd(1e9, 'ab')`, "String.prototype.padEnd"},
		// The parts stay well under the limit (a spread of thousands of
		// arguments did not, nor 140,000 characters under the race
		// detector, whose shadow memory counts: the watchdog could stop
		// the call first).
		{"concat", `((s) => s.concat(s, s, s, s, s, s, s))('y'.repeat(70000))`, "String.prototype.concat"},
		{"join", `Array(1000).fill('y'.repeat(1000)).join()`, "Array.prototype.join"},
		{"join of a sparse array", `Array(1e9).join('--')`, "Array.prototype.join"},
		{"toString through join", `String(Array(1e9))`, "Array.prototype.join"},
		{"fill", `Array(1e9).fill(0)`, "Array.prototype.fill"},
		{"fill of a range", `Array(1e9).fill(0, -2e8)`, "Array.prototype.fill"},
		{"Array.from array-like", `Array.from({length: 1e9})`, "Array.from"},
		{"Array.from string", `Array.from('z'.repeat(100000))`, "Array.from"},
		{"spread", `[...Array(1e9)]`, "Array.prototype.values"},
		{"for-of", `(() => { for (const x of Array(1e9)) {} })()`, "Array.prototype.values"},
		{"spread into a call", `Math.max(...Array(1e9))`, "Array.prototype.values"},
		{"apply", `Math.max.apply(null, {length: 1e9})`, "Function.prototype.apply"},
		{"Reflect.apply", `Reflect.apply(Math.max, null, {length: 1e9})`, "Reflect.apply"},
		{"Reflect.construct", `Reflect.construct(Array, {length: 1e9})`, "Reflect.construct"},
		{"map", `Array(1e9).map(x => x)`, "Array.prototype.map"},
		{"concat arrays", `[].concat(Array(1e8), Array(1e8))`, "Array.prototype.concat"},
		{"split", `'x'.repeat(100000).split('')`, "String.prototype.split"},
		{"split by a regexp", `'x'.repeat(100000).split(/(?:)/)`, "String.prototype.split"},
		{"match", `'x'.repeat(100000).match(/x/g)`, "String.prototype.match"},
		{"string iterator", `[...'x'.repeat(100000)]`, "String.prototype[Symbol.iterator]"},
		{"replaceAll", `'x'.repeat(10000).replaceAll('x', 'y'.repeat(1000))`, "String.prototype.replaceAll"},
		{"replace with $&", `'x'.repeat(2000).replace(/x/g, '$&$&$&')`, "String.prototype.replace"},
		{"JSON.parse", `JSON.parse('[' + '0,'.repeat(20000) + '0]')`, "JSON.parse"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "function onAdd(obj) {\n  const v = " + tt.expr + ";\n}\n"
			r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{MemoryLimit: 1 << 20})
			_, err := r.Call(addEvent)
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Call = %v, want a *ScriptError", err)
			}
			prefix := "RangeError: memory limit: " + tt.what + " would allocate about "
			if !strings.HasPrefix(se.Message, prefix) || !strings.HasSuffix(se.Message, ", over the call's limit of 1 MiB") {
				t.Errorf("Message = %q, want %q…", se.Message, prefix)
			}
			if !strings.HasPrefix(se.Position.String(), "rule.js:2:") {
				t.Errorf("Position = %q, want line 2", se.Position.String())
			}
			if se.Memory || se.Timeout {
				t.Errorf("Memory, Timeout = %v, %v; a refused built-in is an exception", se.Memory, se.Timeout)
			}
		})
	}
}

// TestCappedBuiltinsBehave checks that the capped built-ins still do what
// they did, below the limit.
func TestCappedBuiltinsBehave(t *testing.T) {
	tests := []struct {
		expr, want string
	}{
		{`'ab'.repeat(3)`, `"ababab"`},
		{`'5'.padStart(3, '0') + '|' + 'a'.padEnd(3) + '|'`, `"005|a  |"`},
		{`'a'.concat(1, null, {toString() { return 'o'; }})`, `"a1nullo"`},
		{`[1, [2, 3], null, undefined, 'x'].join('-')`, `"1-2,3---x"`},
		{`String([1, 2])`, `"1,2"`},
		{`(() => { const a = [1]; a.push(a, 2); return a.join(); })()`, `"1,,2"`},
		{`(() => { let n = 0; const o = {toString() { n++; return 'o'; }}; [o, o].join(); return n; })()`, `2`},
		{`Array(3).fill(7)`, `[7,7,7]`},
		{`[1, 2, 3, 4].fill(0, -2)`, `[1,2,0,0]`},
		{`Array.from({length: 3}, (_, i) => i * 2)`, `[0,2,4]`},
		{`Array.from('héllo')`, `["h","é","l","l","o"]`},
		{`[...[1, 2], ...new Set([3])]`, `[1,2,3]`},
		{`(() => { let s = 0; for (const x of [1, 2, 3]) s += x; return s; })()`, `6`},
		{`Math.max.apply(null, [1, 5, 2]) + Reflect.apply(Math.min, null, [4, 3])`, `8`},
		{`Reflect.construct(Date, [0]).getTime()`, `0`},
		{`[3, 1, 2].map(x => x * 2).filter(x => x > 2).sort()`, `[4,6]`},
		{`[1].concat([2, 3], 4)`, `[1,2,3,4]`},
		{`'a,b,,c'.split(',')`, `["a","b","","c"]`},
		{`'a1b22c'.split(/\d+/)`, `["a","b","c"]`},
		{`'abc'.split('')`, `["a","b","c"]`},
		{`'a-b-c'.replaceAll('-', '+') + 'x1y2'.replace(/\d/g, '<$&>')`, `"a+b+cx<1>y<2>"`},
		{`'aXbX'.replace('X', () => '!')`, `"a!bX"`},
		{`'a1b2'.match(/\d/g)`, `["1","2"]`},
		{`[...'ab']`, `["a","b"]`},
		{`JSON.parse('{"a": [1, 2, {"b": "c"}]}').a[2].b`, `"c"`},
		{`JSON.parse('[1, 2]', (k, v) => typeof v === 'number' ? v * 10 : v)`, `[10,20]`},
		{`Array.prototype.values === Array.prototype[Symbol.iterator]`, `true`},
		{`[Array.prototype.join.name, Array.prototype.join.length, 'x'.repeat.name, Array.from.length]`, `["join",1,"repeat",1]`},
		{`[typeof Uint8Array, typeof ArrayBuffer, typeof DataView]`, `["undefined","undefined","undefined"]`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			src := "function onAdd(obj) {\n  kreact.log(JSON.stringify(" + tt.expr + "));\n}\n"
			h := newFakeHost()
			r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
			if _, err := r.Call(addEvent); err != nil {
				t.Fatalf("Call: %v", err)
			}
			if len(h.logs) != 1 || h.logs[0].Msg != tt.want {
				t.Errorf("logged %v, want %s", h.logs, tt.want)
			}
		})
	}
}

// allocated reads the process's allocation counter.
func allocated() uint64 { return readMetric("/gc/heap/allocs:bytes") }

// readMetric reads one uint64 runtime metric.
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestMemoryLimitStopsGrowingCall runs scripts that build a value step by
// step, which no single built-in check sees, with a limit of 16 MiB and a
// timeout long enough to take gigabytes. The watchdog must stop each call,
// and what the process allocated during the call stays within a bound
// of a few times the limit.
func TestMemoryLimitStopsGrowingCall(t *testing.T) {
	const limit = 16 << 20
	// The watchdog reads every 5ms: at a few GB/s a call overruns by tens
	// of MB. A string that doubles overruns by one more doubling, and by
	// more when a reading comes late (a loaded machine): its bound only
	// says that it stopped long before its 30s timeout.
	const bound, doublingBound = 256 << 20, 1 << 30
	tests := []struct {
		name, body string
		bound      uint64
	}{
		{"push loop", `const a = []; for (;;) a.push({i: a.length});`, bound},
		{"string doubling", `let s = 'x'; for (;;) s += s;`, doublingBound},
		{"concatenation loop", `let s = ''; for (;;) s += 'abcdefgh' + s.length;`, bound},
		{"object keys", `const o = {}; for (let i = 0;; i++) o['k' + i] = i;`, bound},
		{"JSON.parse in a loop", `const keep = []; const t = '[' + '{"a":1},'.repeat(1000) + '0]'; for (;;) keep.push(JSON.parse(t));`, bound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "function onAdd(obj) {\n  " + tt.body + "\n}\n"
			r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{Rule: "hog", MemoryLimit: limit, Timeout: 30 * time.Second})
			runtime.GC()
			before := allocated()
			_, err := r.Call(addEvent)
			used := allocated() - before
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Call = %v, want a *ScriptError", err)
			}
			if !se.Memory || se.Timeout {
				t.Errorf("Memory, Timeout = %v, %v, want true, false (%v)", se.Memory, se.Timeout, err)
			}
			// Stopped on its own figure, or on the process's with
			// evidence of its own (see internal/governor).
			own := strings.HasPrefix(se.Message, "memory limit exceeded: the call took ") && strings.HasSuffix(se.Message, " of new memory, over its limit of 16 MiB")
			process := strings.HasPrefix(se.Message, "memory limit exceeded: the process allocated ") && strings.Contains(se.Message, " while the call ran, over the call's limit of 16 MiB, and the call took ")
			if !own && !process {
				t.Errorf("Message = %q", se.Message)
			}
			if se.Allocated <= limit || !strings.Contains(se.Message, " "+FormatBytes(se.Allocated)+" ") {
				t.Errorf("Allocated = %d, want over the limit and as the message says (%q)", se.Allocated, se.Message)
			}
			if !strings.HasPrefix(se.Position.String(), "rule.js:2:") || se.Handler != "onAdd" || se.Rule != "hog" {
				t.Errorf("Position, Handler, Rule = %q, %q, %q", se.Position.String(), se.Handler, se.Rule)
			}
			if used > tt.bound {
				t.Errorf("the process allocated %s during the call, want at most %s", FormatBytes(int64(used)), FormatBytes(int64(tt.bound)))
			}
			// The runtime was discarded: the next call starts over.
			if _, err := r.Call(event.Event{Type: event.Delete, Object: addEvent.Object, Resource: deployments}); err != nil {
				t.Errorf("next call: %v", err)
			}
		})
	}
}

// TestMemoryLimitSparesOtherCalls runs short calls of a good runtime while
// a hostile call allocates: only the hostile call is stopped.
func TestMemoryLimitSparesOtherCalls(t *testing.T) {
	h := newFakeHost()
	h.getEntered = make(chan struct{}, 1)
	h.getRelease = make(chan struct{})
	hog := mustRuntime(t, "hog.js", "function onAdd(obj) {\n  kreact.get('configmaps', 'default', 'x');\n  const a = []; for (;;) a.push([a.length]);\n}\n",
		h, RuntimeOptions{Rule: "hog", MemoryLimit: 16 << 20, Timeout: 30 * time.Second})
	goodHost := newFakeHost()
	good := mustRuntime(t, "good.js", "function onAdd(obj) {\n  return kreact.patch(obj, {metadata: {annotations: {seen: 'yes'}}});\n}\n",
		goodHost, RuntimeOptions{Rule: "good", MemoryLimit: 16 << 20})

	hogErr := make(chan error, 1)
	go func() {
		_, err := hog.Call(addEvent)
		hogErr <- err
	}()
	<-h.getEntered
	close(h.getRelease)
	var goodCalls, goodErrs atomic.Int64
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := good.Call(addEvent); err != nil {
				goodErrs.Add(1)
				t.Errorf("good call: %v", err)
			}
			goodCalls.Add(1)
			// Host methods run on the call's thread, so what the host
			// keeps is the call's: this one keeps no actions.
			goodHost.mu.Lock()
			goodHost.actions = nil
			goodHost.mu.Unlock()
		}
	})
	err := <-hogErr
	close(stop)
	wg.Wait()
	var se *event.ScriptError
	if !errors.As(err, &se) || !se.Memory {
		t.Fatalf("hostile call = %v, want a memory limit error", err)
	}
	if goodCalls.Load() == 0 {
		t.Errorf("no good call ran while the hostile call did")
	}
}

func TestSaturatingArithmetic(t *testing.T) {
	if got := mul(1<<40, 1<<40, 2); got != math.MaxInt64 {
		t.Errorf("mul overflow = %d", got)
	}
	if got := mul(3, 4, 5); got != 60 {
		t.Errorf("mul = %d", got)
	}
	if got := add(math.MaxInt64, 1); got != math.MaxInt64 {
		t.Errorf("add overflow = %d", got)
	}
	for _, tt := range []struct {
		f    float64
		want int64
	}{{math.NaN(), 0}, {-5, 0}, {1e300, 1 << 53}, {math.Inf(1), 1 << 53}, {7.9, 7}} {
		if got := clampCount(tt.f); got != tt.want {
			t.Errorf("clampCount(%v) = %d, want %d", tt.f, got, tt.want)
		}
	}
}

func TestJSONShape(t *testing.T) {
	for _, tt := range []struct {
		text          string
		depth, values int
	}{
		{`1`, 0, 1},
		{`[1, 2, 3]`, 1, 4},
		{`{"a": [1, {"b": "x,y[{"}]}`, 3, 5},
		{`"\"[,"`, 0, 1},
	} {
		d, v := jsonShape(tt.text, 100)
		if d != tt.depth || v != int64(tt.values) {
			t.Errorf("jsonShape(%s) = %d, %d; want %d, %d", tt.text, d, v, tt.depth, tt.values)
		}
	}
}

// TestMemoryErrorReclaims checks that a call stopped for its memory limit
// asks for a reclaim, and a call that fails otherwise does not.
func TestMemoryErrorReclaims(t *testing.T) {
	freed := make(chan struct{}, 10)
	reclaim := func() { freed <- struct{}{} }

	thrower := mustRuntime(t, "throw.js", "function onAdd(obj) { throw new Error('no'); }\n", newFakeHost(), RuntimeOptions{})
	hog := mustRuntime(t, "hog.js", "function onAdd(obj) { const a = []; for (;;) a.push([a.length]); }\n",
		newFakeHost(), RuntimeOptions{MemoryLimit: 8 << 20, Timeout: 30 * time.Second})
	thrower.cfg.reclaim, hog.cfg.reclaim = reclaim, reclaim
	if _, err := thrower.Call(addEvent); err == nil {
		t.Fatal("throwing call succeeded")
	}
	_, err := hog.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) || !se.Memory {
		t.Fatalf("hostile call = %v, want a memory limit error", err)
	}
	<-freed
	// Only the memory error asked: there is no request left.
	if len(freed) != 0 {
		t.Error("a reclaim is still pending after the only one requested ran")
	}
}

// TestMemoryLimitSparesALoopBesideAHog runs a call that loops without
// allocating beside one that allocates without end: the hog is stopped
// for its memory limit, the loop at its timeout, never for memory.
func TestMemoryLimitSparesALoopBesideAHog(t *testing.T) {
	h := newFakeHost()
	h.getEntered = make(chan struct{}, 1)
	h.getRelease = make(chan struct{})
	loop := mustRuntime(t, "loop.js", "function onAdd(obj) {\n  kreact.get('configmaps', 'default', 'x');\n  for (;;) {}\n}\n",
		h, RuntimeOptions{Rule: "loop", MemoryLimit: 16 << 20, Timeout: 3 * time.Second})
	hog := mustRuntime(t, "hog.js", "function onAdd(obj) {\n  let s = 'x'; const a = []; for (;;) { a.push([a.length]); if (s.length < 1 << 24) s += s; }\n}\n",
		newFakeHost(), RuntimeOptions{Rule: "hog", MemoryLimit: 16 << 20, Timeout: 30 * time.Second})
	loopErr := make(chan error, 1)
	go func() {
		_, err := loop.Call(addEvent)
		loopErr <- err
	}()
	<-h.getEntered
	close(h.getRelease)
	_, err := hog.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) || !se.Memory {
		t.Errorf("hog = %v, want a memory limit error", err)
	}
	err = <-loopErr
	if !errors.As(err, &se) || se.Memory || !se.Timeout {
		t.Errorf("loop = %v, want a timeout and no memory limit error", err)
	}
}

// TestMemoryLimitBoundsCallsTogether runs four calls that allocate without
// end at once: each is stopped for memory, some on what the process
// allocated while they ran, before they took their own limit each, as
// they took new memory themselves.
func TestMemoryLimitBoundsCallsTogether(t *testing.T) {
	const n, limit = 4, 32 << 20
	h := newFakeHost()
	h.getEntered = make(chan struct{}, n)
	h.getRelease = make(chan struct{})
	errs := make(chan error, n)
	for i := range n {
		r := mustRuntime(t, "hog.js", "function onAdd(obj) {\n  kreact.get('configmaps', 'default', 'x');\n  const a = []; for (;;) a.push([a.length]);\n}\n",
			h, RuntimeOptions{Rule: fmt.Sprint("hog-", i), MemoryLimit: limit, Timeout: 30 * time.Second})
		go func() {
			_, err := r.Call(addEvent)
			errs <- err
		}()
	}
	for range n {
		<-h.getEntered
	}
	close(h.getRelease)
	together := 0
	for range n {
		var se *event.ScriptError
		if err := <-errs; !errors.As(err, &se) || !se.Memory {
			t.Errorf("Call = %v, want a memory limit error", err)
			continue
		}
		if strings.HasPrefix(se.Message, "memory limit exceeded: the process allocated ") {
			together++
		}
	}
	if together == 0 {
		t.Error("no call was stopped for what the process allocated while it ran")
	}
}
