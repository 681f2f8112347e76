package scripting

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
)

var addEvent = event.Event{Type: event.Add, Object: deployment("default", "web", 2), Resource: deployments}

func TestThrowInHandler(t *testing.T) {
	src := `function onAdd(obj, ctx) {
  check(obj);
}

function check(obj) {
  if (obj.spec.replicas < 3) {
    throw new RangeError("too few replicas: " + obj.spec.replicas);
  }
}
`
	r := mustRuntime(t, "rules/replicas.js", src, newFakeHost(), RuntimeOptions{Rule: "replicas"})
	_, err := r.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) {
		t.Fatalf("Call = %v, want a *ScriptError", err)
	}
	throwAt := positionOf("replicas", "rules/replicas.js", src, "new RangeError")
	want := &event.ScriptError{
		Rule:     "replicas",
		Handler:  "onAdd",
		Position: throwAt,
		Message:  "RangeError: too few replicas: 2",
		Stack:    "at check (" + throwAt.String() + ")\nat onAdd (" + position("rules/replicas.js", src, "(obj);") + ")",
	}
	se.Err = nil
	if runtime.GOOS == "linux" && se.CPU <= 0 {
		t.Errorf("ScriptError.CPU = %v, want the call's CPU time", se.CPU)
	}
	se.CPU = 0
	if *se != *want {
		t.Errorf("ScriptError =\n%#v\nwant\n%#v", se, want)
	}
	if got := err.Error(); got != throwAt.String()+": RangeError: too few replicas: 2 (rule replicas, onAdd)" {
		t.Errorf("Error() = %q", got)
	}
}

func TestThrowNonError(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"string", `throw "plain string";`, "plain string"},
		{"object", `throw {toString() { return "custom"; }};`, "custom"},
		{"toString throws", `throw {toString() { throw new Error("nope"); }};`, "(exception that cannot be converted to a string)"},
		{"host error", `kreact.get("nosuchthing", "default", "x");`, `Error: get: resolve "nosuchthing": the server doesn't have a resource type "nosuchthing"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRuntime(t, "rule.js", "function onAdd(obj) {\n  "+tt.body+"\n}", newFakeHost(), RuntimeOptions{})
			_, err := r.Call(addEvent)
			var se *event.ScriptError
			if !errors.As(err, &se) || se.Message != tt.want {
				t.Fatalf("Call = %v, want message %q", err, tt.want)
			}
			if se.Position.String() != "rule.js:2:3" && !strings.HasPrefix(se.Position.String(), "rule.js:2:") {
				t.Errorf("Position = %q, want line 2", se.Position.String())
			}
		})
	}
}

func TestAsyncHandler(t *testing.T) {
	src := `async function onAdd(obj) {
  await null;
  kreact.patch(obj, {spec: {replicas: 1}});
  await Promise.resolve();
  throw new Error("later");
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	_, err := r.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Message != "promise rejected: Error: later" {
		t.Fatalf("Call = %v, want the rejection", err)
	}
	if n := len(h.recorded()); n != 1 {
		t.Errorf("%d actions, want 1", n)
	}
}

// countingScript logs how many calls its runtime made, and never returns
// from the call of object "loop".
const countingScript = `let calls = 0;
function onAdd(obj, ctx) {
  calls++;
  kreact.log("calls=" + calls);
  if (obj.metadata.name === "loop") {
    for (;;) {}
  }
}`

func TestTimeout(t *testing.T) {
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", countingScript, h, RuntimeOptions{Timeout: 50 * time.Millisecond})

	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	_, err := r.Call(event.Event{Type: event.Add, Object: deployment("default", "loop", 1), Resource: deployments})
	var se *event.ScriptError
	if !errors.As(err, &se) || !se.Timeout {
		t.Fatalf("Call = %v, want a timeout", err)
	}
	// Where the loop is interrupted depends on the instruction it is at.
	if se.Message != "timed out after 50ms" || !strings.HasPrefix(se.Position.String(), "rule.js:") || !strings.Contains(se.Stack, "at onAdd (rule.js:") {
		t.Errorf("timeout error = %v\n%s", se, se.Stack)
	}
	// The runtime is rebuilt: the global counter starts over.
	if _, err := r.Call(addEvent); err != nil {
		t.Fatalf("Call after timeout: %v", err)
	}
	if got, want := strings.Join(h.messages(), ","), "calls=1,calls=2,calls=1"; got != want {
		t.Errorf("logs = %s, want %s", got, want)
	}
}

// TestTimeoutOfEachCall: each call has its whole timeout, however soon
// it follows the one before, and is stopped at it, however long the
// runtime was idle before.
func TestTimeoutOfEachCall(t *testing.T) {
	const timeout = 100 * time.Millisecond
	src := `function onAdd(obj) { if (obj.metadata.name === "loop") for (;;) {} }`
	r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{Timeout: timeout})
	loop := event.Event{Type: event.Add, Object: deployment("default", "loop", 1), Resource: deployments}
	for _, pause := range []time.Duration{0, timeout / 2, 2 * timeout} {
		if _, err := r.Call(addEvent); err != nil {
			t.Fatal(err)
		}
		time.Sleep(pause)
		start := time.Now()
		_, err := r.Call(loop)
		var se *event.ScriptError
		if !errors.As(err, &se) || !se.Timeout {
			t.Fatalf("after a pause of %v: Call = %v, want a timeout", pause, err)
		}
		// A lower bound, not a speed: the call may not be cut short.
		if took := time.Since(start); took < timeout {
			t.Errorf("after a pause of %v: the call was stopped after %v, before its timeout of %v", pause, took, timeout)
		}
	}
}

func TestTimeoutAtTopLevel(t *testing.T) {
	p, err := Compile("rule.js", "while (true) {}\nfunction onAdd() {}", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewRuntime(p, newFakeHost(), RuntimeOptions{Timeout: 20 * time.Millisecond})
	var se *event.ScriptError
	if !errors.As(err, &se) || !se.Timeout || se.Handler != "" {
		t.Fatalf("NewRuntime = %v, want a top-level timeout", err)
	}
}

// TestStuckInNativeCode covers a call that Interrupt cannot stop because
// it is inside Go code (here the host's Get; in real life a slow built-in).
// stuckRuntime returns a runtime whose call of object "stuck" (the event
// returned) blocks in a host call, which goja cannot interrupt, until
// h.getRelease is closed, telling h.getEntered (of capacity entered) when
// it gets there; timeout and grace period are 20ms each. Other objects
// log "ran NAME".
func stuckRuntime(t *testing.T, entered int) (*Runtime, *fakeHost, event.Event) {
	t.Helper()
	src := `function onAdd(obj) {
  if (obj.metadata.name === "stuck") {
    kreact.get("deploy", "default", "x");
    kreact.patch(obj, {spec: {replicas: 9}});
  }
  kreact.log("ran " + obj.metadata.name);
}`
	h := newFakeHost()
	h.getEntered = make(chan struct{}, entered)
	h.getRelease = make(chan struct{})
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Timeout: 20 * time.Millisecond})
	r.cfg.grace = 20 * time.Millisecond
	return r, h, event.Event{Type: event.Add, Object: deployment("default", "stuck", 1), Resource: deployments}
}

func TestStuckInNativeCode(t *testing.T) {
	r, h, stuck := stuckRuntime(t, maxStuck)

	for i := range maxStuck {
		_, err := r.Call(stuck)
		var se *event.ScriptError
		if !errors.As(err, &se) || !se.Timeout || !strings.Contains(se.Message, "runtime discarded") {
			t.Fatalf("stuck call %d = %v, want an abandoned timeout", i, err)
		}
		<-h.getEntered
	}
	// Too many calls are stuck: the next one does not run.
	_, err := r.Call(addEvent)
	if !errors.Is(err, event.ErrStuck) {
		t.Fatalf("Call = %v, want ErrStuck", err)
	}

	close(h.getRelease)
	r.cfg.inflight.Wait()
	if _, err := r.Call(addEvent); err != nil {
		t.Fatalf("Call after the stuck calls ended: %v", err)
	}
	if got := h.messages(); strings.Join(got, ",") != "ran web" {
		t.Errorf("logs = %q; the abandoned calls must not log after Get", got)
	}
	if a := h.recorded(); len(a) != 0 {
		t.Errorf("abandoned calls queued actions: %+v", a)
	}
}

func TestStackOverflow(t *testing.T) {
	src := `function down(n) { return down(n + 1) + 1; }
function viaNative(n) { return [n].map(viaNative); }
function onAdd(obj) {
  if (obj.metadata.name === "js") down(0);
  if (obj.metadata.name === "native") viaNative(0);
  kreact.log("ok");
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{MaxCallStackSize: 200})
	for _, name := range []string{"js", "native"} {
		_, err := r.Call(event.Event{Type: event.Add, Object: deployment("default", name, 1), Resource: deployments})
		var se *event.ScriptError
		if !errors.As(err, &se) || se.Message != "RangeError: maximum call stack size (200) exceeded" || se.Timeout {
			t.Fatalf("%s: Call = %v, want a stack overflow", name, err)
		}
		if !strings.HasPrefix(se.Position.String(), "rule.js:") {
			t.Errorf("%s: Position = %q", name, se.Position.String())
		}
	}
	if _, err := r.Call(addEvent); err != nil {
		t.Fatalf("Call after stack overflow: %v", err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "ok" {
		t.Errorf("logs = %q", got)
	}
}

func TestMissingHandler(t *testing.T) {
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", `function onDelete(obj) { kreact.log("deleted"); }`, h, RuntimeOptions{})
	for _, ev := range []event.Event{addEvent, {Type: event.Update, Object: addEvent.Object, OldObject: addEvent.Object}} {
		if _, err := r.Call(ev); err != nil {
			t.Errorf("Call(%s) = %v", ev.Type, err)
		}
	}
	if got := h.messages(); len(got) != 0 {
		t.Errorf("logs = %q", got)
	}
	if _, err := r.Call(event.Event{Type: "bogus"}); err == nil {
		t.Error("Call with an unknown event type succeeded")
	}
	if allocs := testing.AllocsPerRun(100, func() { _, _ = r.Call(addEvent) }); allocs != 0 {
		t.Errorf("a call without handler allocates %v times", allocs)
	}
}

func TestRegexpTimeout(t *testing.T) {
	// The look-ahead makes goja use regexp2, which backtracks
	// exponentially here; the match times out and counts as no match.
	src := `function onAdd(obj) {
  const evil = /^(?=(a+)+$)a/;
  kreact.log(String(evil.test("a".repeat(40) + "!")));
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Timeout: 10 * time.Second})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "false" {
		t.Errorf("logs = %q", got)
	}
}

func TestSandbox(t *testing.T) {
	// A source map that renames the code's file: if goja loads it, stacks
	// name "leaked-source.js". eval'd code has no file name, so goja
	// resolves the map's path against the working directory.
	mapFile := filepath.Join(t.TempDir(), "probe.map")
	if err := os.WriteFile(mapFile, []byte(`{"version":3,"sources":["leaked-source.js"],"names":[],"mappings":"AAAA,MAAM,CAAC"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	relMap, err := filepath.Rel(wd, mapFile)
	if err != nil {
		t.Fatal(err)
	}
	probe := fmt.Sprintf("(() => { try { eval(%q); } catch (e) { return e.stack; } })()",
		"throw new Error('probe')\n//# sourceMappingURL="+filepath.ToSlash(relMap))
	if v, err := goja.New().RunString(probe); err != nil || !strings.Contains(v.String(), "leaked-source.js") {
		t.Fatalf("premise: goja with default options reads the source map: %v %v", v, err)
	}

	src := `function onAdd(obj) {
  kreact.log([typeof require, typeof process, typeof fetch, typeof XMLHttpRequest].join(","));
  kreact.log(String(` + probe + `).includes("leaked-source.js") ? "read" : "not read");
  const tryCode = (f) => { try { return String(f()); } catch (e) { return e.name; } };
  kreact.log([
    tryCode(() => new Function("return 2")()),
    tryCode(() => (function () {}).constructor("return 3")()),
    tryCode(() => (async function () {}).constructor("return 4")),
    tryCode(() => (function* () {}).constructor("return 5")),
    tryCode(() => (0, eval)("6")),
  ].join(","));
  kreact.log(String(Date.now()) + " " + new Date().toISOString() + " " + kreact.now().toISOString());
  throw new Error("end");
}
//# sourceMappingURL=` + mapFile
	h := newFakeHost()
	r := mustRuntime(t, "/rules/rule.js", src, h, RuntimeOptions{})
	_, err = r.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Position.String() != position("/rules/rule.js", src, `new Error("end")`) {
		t.Errorf("Call = %v; the rule's own source map must not be read either", err)
	}
	want := []string{
		"undefined,undefined,undefined,undefined",
		"not read",
		"EvalError,EvalError,EvalError,EvalError,EvalError",
		fmt.Sprintf("%d 2026-03-04T05:06:07.000Z 2026-03-04T05:06:07.000Z", h.now.UnixMilli()),
	}
	if got := h.messages(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestGlobalsAreReadOnly(t *testing.T) {
	src := `function onAdd() {
  const errs = [];
  try { kreact.patch = null; } catch (e) { errs.push(e.name); }
  try { kreact = {}; } catch (e) { errs.push(e.name); }
  try { console.log = null; } catch (e) { errs.push(e.name); }
  kreact.log(errs.join(","));
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "TypeError,TypeError,TypeError" {
		t.Errorf("logs = %q", got)
	}
}

func TestCtx(t *testing.T) {
	src := `function onUpdate(oldObj, newObj, ctx) { kreact.log(JSON.stringify(ctx)); }
function onAdd(obj, ctx) { kreact.log(JSON.stringify(ctx)); }
function onDelete(obj, ctx) {
  kreact.log(JSON.stringify(ctx));
  ctx.rule = "other";
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "ctx-rule"})
	obj := deployment("default", "web", 1)
	cm := configMaps
	if _, err := r.Call(event.Event{Type: event.Add, Object: obj, Initial: true, Resource: deployments}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Call(event.Event{Type: event.Update, Object: obj, OldObject: obj, Changed: []string{"data.a", "data.b"}, Resource: cm}); err != nil {
		t.Fatal(err)
	}
	_, err := r.Call(event.Event{Type: event.Delete, Object: obj, Resource: deployments})
	if err == nil || !strings.Contains(err.Error(), readOnlyMessage) {
		t.Errorf("writing ctx: %v", err)
	}
	want := []string{
		`{"rule":"ctx-rule","event":"add","initial":true,"changed":[],"resource":"deployments.apps"}`,
		`{"rule":"ctx-rule","event":"update","initial":false,"changed":["data.a","data.b"],"resource":"configmaps"}`,
		`{"rule":"ctx-rule","event":"delete","initial":false,"changed":[],"resource":"deployments.apps"}`,
	}
	if got := h.messages(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestConcurrentRuntimes(t *testing.T) {
	// One Program, one Runtime per goroutine; the race detector checks
	// that nothing is shared that should not be.
	p, err := Compile("rule.js", `function onAdd(obj) { kreact.patch(obj, {spec: {replicas: obj.spec.replicas + 1}}); }`, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := newFakeHost()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			r, err := NewRuntime(p, h, RuntimeOptions{})
			if err != nil {
				errs <- err
				return
			}
			defer r.Close()
			for range 20 {
				if _, err := r.Call(addEvent); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if n := len(h.recorded()); n != 80 {
		t.Errorf("%d actions, want 80", n)
	}
}

func TestClose(t *testing.T) {
	p, err := Compile("rule.js", "function onAdd() {}", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewRuntime(p, newFakeHost(), RuntimeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	r.Close()
	if _, err := r.Call(addEvent); !errors.Is(err, event.ErrClosed) {
		t.Errorf("Call after Close = %v, want ErrClosed", err)
	}
	r.cfg.inflight.Wait()
}

// TestRuntimeCollected checks that a Runtime dropped without Close does
// not leave its goroutine behind.
func TestRuntimeCollected(t *testing.T) {
	p, err := Compile("rule.js", "function onAdd() {}", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := func() *config {
		r, err := NewRuntime(p, newFakeHost(), RuntimeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Call(addEvent); err != nil {
			t.Fatal(err)
		}
		return r.cfg
	}()
	stopped := make(chan struct{})
	go func() {
		cfg.inflight.Wait()
		close(stopped)
	}()
	for {
		runtime.GC()
		select {
		case <-stopped:
			return
		case <-time.After(10 * time.Millisecond):
		}
	}
}

func TestToStringLoopOfThrownValue(t *testing.T) {
	src := `function onAdd() { throw {toString() { for (;;) {} }}; }`
	r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{Timeout: 20 * time.Millisecond})
	_, err := r.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Message != "(exception that cannot be converted to a string)" {
		t.Fatalf("Call = %v", err)
	}
	if r.env != nil {
		t.Error("the runtime was interrupted and must be rebuilt")
	}
	if _, err := r.Call(addEvent); err == nil || !strings.Contains(err.Error(), "cannot be converted") {
		t.Fatalf("second Call = %v", err)
	}
}

// panicHost panics in Permit, like a host with a bug.
type panicHost struct{ *fakeHost }

func (panicHost) Permit(actions.Action) error { panic("host bug") }

func TestHostPanic(t *testing.T) {
	h := panicHost{newFakeHost()}
	r := mustRuntime(t, "rule.js", `function onAdd(obj) { kreact.delete(obj); }`, h, RuntimeOptions{})
	_, err := r.Call(addEvent)
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Message != "internal error: host bug" || !strings.Contains(se.Err.Error(), "goroutine") {
		t.Fatalf("Call = %v", err)
	}
	// The runtime is rebuilt and usable; the host still panics.
	if _, err := r.Call(addEvent); !errors.As(err, &se) || se.Message != "internal error: host bug" {
		t.Fatalf("second Call = %v", err)
	}
}

func TestNoActionsAtTopLevel(t *testing.T) {
	p, err := Compile("rule.js", `kreact.delete({resource: "ns", name: "x"});
function onAdd() {}`, CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	h := newFakeHost()
	_, err = NewRuntime(p, h, RuntimeOptions{})
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Message != "Error: delete: actions can only be requested from a handler" || se.Position.String() != "rule.js:1:14" {
		t.Fatalf("NewRuntime = %v", err)
	}
	if len(h.recorded()) != 0 {
		t.Error("an action was queued")
	}
}

func TestTick(t *testing.T) {
	src := `let ticks = 0;
function onTick(ctx) {
  ticks++;
  kreact.log(JSON.stringify(ctx) + " " + ticks + " " + arguments.length);
  for (const d of kreact.list("deploy")) kreact.delete(d);
}`
	h := newFakeHost(deployment("default", "old", 1))
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "sweeper"})
	if !r.Program().HasHandler(event.Tick) || r.Program().HasHandler(event.Add) {
		t.Fatal("HasHandler")
	}
	for range 2 {
		if _, err := r.Call(event.Event{Type: event.Tick}); err != nil {
			t.Fatal(err)
		}
	}
	want := `{"rule":"sweeper","event":"tick","initial":false,"changed":[],"resource":""} 2 1`
	if got := h.messages(); len(got) != 2 || got[1] != want {
		t.Errorf("logs = %q, want the second %s", got, want)
	}
	if a := h.recorded(); len(a) != 2 || a[0].Verb != actions.Delete || a[0].Name != "old" {
		t.Errorf("actions = %+v", a)
	}
	if event.Tick.Handler() != "onTick" || event.Type("nope").Handler() != "" {
		t.Error("Handler names")
	}
}
