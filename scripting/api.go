package scripting

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"reflect"
	"slices"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
)

type native = func(goja.FunctionCall) goja.Value

// install sets up the sandbox and the kreact and console globals. goja has
// no require, file system or network of its own; the only way out is the
// Host.
func (e *env) install() {
	vm := e.vm
	// eval and new Function parse at run time: no source map loading
	// there either.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	vm.SetMaxCallStackSize(e.cfg.opts.MaxCallStackSize)
	vm.SetTimeSource(e.cfg.host.Now)
	// Kept before the script can reassign the global.
	e.date = vm.Get("Date")
	// Code built from strings at run time (eval, the Function
	// constructors, reachable from any function's .constructor) would
	// escape every check Compile makes on a script; rules do not need it.
	if _, err := vm.RunString(noDynamicCode); err != nil {
		panic(fmt.Sprintf("scripting: disabling dynamic code: %v", err))
	}
	e.boundJSONParse()
	e.lockViewPrototypes()
	e.capAllocations()

	e.global("kreact", map[string]native{
		"clone":        e.clone,
		"get":          e.get,
		"list":         e.list,
		"create":       e.queuing("create", e.createOrApply("create", actions.Create)),
		"apply":        e.queuing("apply", e.createOrApply("apply", actions.Apply)),
		"patch":        e.queuing("patch", e.patch),
		"jsonPatch":    e.queuing("jsonPatch", e.jsonPatch),
		"delete":       e.queuing("delete", e.delete),
		"event":        e.queuing("event", e.event),
		"setCondition": e.queuing("setCondition", e.setCondition),
		"http":         e.queuing("http", e.http),
		"hash":         e.hash,
		"now":          e.now,
		"once":         e.queuing("once", e.onceCall),
		"owner":        e.ownerOf,
		"replica":      e.replica,
		"after":        e.queuing("after", e.after),
		"log":          e.logf("log", slog.LevelInfo),
		"warn":         e.logf("warn", slog.LevelWarn),
		"error":        e.logf("error", slog.LevelError),
	})
	e.global("console", map[string]native{
		"log":   e.console(slog.LevelInfo),
		"info":  e.console(slog.LevelInfo),
		"debug": e.console(slog.LevelDebug),
		"warn":  e.console(slog.LevelWarn),
		"error": e.console(slog.LevelError),
	})
}

// boundJSONParse makes JSON.parse refuse text nested deeper than
// MaxJSONNesting before goja's recursive parser sees it.
func (e *env) boundJSONParse() {
	json := e.vm.Get("JSON").ToObject(e.vm)
	parse, ok := goja.AssertFunction(json.Get("parse"))
	if !ok {
		panic("scripting: JSON.parse is not a function")
	}
	bounded := e.vm.ToValue(func(call goja.FunctionCall) goja.Value {
		textValue := call.Argument(0).ToString()
		text := textValue.String()
		d, values := jsonShape(text, MaxJSONNesting)
		if d > MaxJSONNesting {
			panic(e.vm.NewTypeError("JSON.parse: the text nests deeper than %d levels", MaxJSONNesting))
		}
		if n := jsonParseSize(text, values); n > e.cfg.opts.MemoryLimit {
			e.throwMemory("JSON.parse", n)
		}
		args := append([]goja.Value{textValue}, call.Arguments[min(1, len(call.Arguments)):]...)
		v, err := parse(call.This, args...)
		if err != nil {
			panic(err)
		}
		return v
	})
	if err := json.DefineDataProperty("parse", bounded, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: bounding JSON.parse: %v", err))
	}
}

// lockViewPrototypes makes Object.setPrototypeOf, Reflect.setPrototypeOf
// and the __proto__ setter throw a TypeError on a read-only view of a
// cached object, as writing its properties does: goja lets a dynamic
// object's prototype change, which would let a script shadow the view's
// contents for every later reader of its prototype chain.
func (e *env) lockViewPrototypes() {
	vm := e.vm
	views := map[reflect.Type]bool{
		reflect.TypeFor[*objectView](): true, reflect.TypeFor[*arrayView](): true, reflect.TypeFor[*listView](): true,
		reflect.TypeFor[*stringsView](): true, reflect.TypeFor[*ctxView](): true, reflect.TypeFor[*reqView](): true, strictViewType: true,
	}
	check := func(v goja.Value) {
		if o, ok := v.(*goja.Object); ok && views[o.ExportType()] {
			panic(vm.NewTypeError(readOnlyMessage))
		}
	}
	// guard wraps fn, called with this and the arguments, after check of
	// the value at of.
	guard := func(name string, fn goja.Callable, of func(goja.FunctionCall) goja.Value) *goja.Object {
		f := vm.ToValue(func(call goja.FunctionCall) goja.Value {
			check(of(call))
			v, err := fn(call.This, call.Arguments...)
			if err != nil {
				panic(err)
			}
			return v
		}).(*goja.Object)
		_ = f.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return f
	}
	first := func(call goja.FunctionCall) goja.Value { return call.Argument(0) }
	this := func(call goja.FunctionCall) goja.Value { return call.This }
	for _, global := range []string{"Object", "Reflect"} {
		o := vm.Get(global).ToObject(vm)
		fn, ok := goja.AssertFunction(o.Get("setPrototypeOf"))
		if !ok {
			panic("scripting: " + global + ".setPrototypeOf is not a function")
		}
		if err := o.DefineDataProperty("setPrototypeOf", guard("setPrototypeOf", fn, first), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
			panic(fmt.Sprintf("scripting: guarding %s.setPrototypeOf: %v", global, err))
		}
	}
	getDescriptor, _ := goja.AssertFunction(vm.Get("Object").ToObject(vm).Get("getOwnPropertyDescriptor"))
	proto := vm.Get("Object").ToObject(vm).Get("prototype").ToObject(vm)
	d, err := getDescriptor(goja.Undefined(), proto, vm.ToValue("__proto__"))
	if err != nil {
		panic(fmt.Sprintf("scripting: the __proto__ accessor: %v", err))
	}
	desc := d.ToObject(vm)
	set, ok := goja.AssertFunction(desc.Get("set"))
	if !ok {
		panic("scripting: Object.prototype.__proto__ has no setter")
	}
	if err := proto.DefineAccessorProperty("__proto__", desc.Get("get"), guard("set __proto__", set, this), goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: guarding __proto__: %v", err))
	}
}

// noDynamicCode replaces eval and every Function constructor with a
// function that throws an EvalError, in properties a script cannot write.
const noDynamicCode = `(function () {
  "use strict";
  const refuse = function () {
    throw new EvalError("eval and the Function constructor are disabled in kreact rules");
  };
  const locked = {value: refuse, writable: false, enumerable: false, configurable: false};
  // goja has no async generators, so these are all the constructors.
  for (const f of [function () {}, async function () {}, function* () {}]) {
    Object.defineProperty(Object.getPrototypeOf(f), "constructor", locked);
  }
  Object.defineProperty(globalThis, "eval", locked);
  Object.defineProperty(globalThis, "Function", locked);
})();`

// global defines a read-only global object holding read-only functions.
func (e *env) global(name string, fns map[string]native) {
	o := e.vm.NewObject()
	names := make([]string, 0, len(fns))
	for n := range fns {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		f := e.vm.ToValue(fns[n]).(*goja.Object)
		// ToValue names the function after the Go method; stacks should
		// show the script's name.
		_ = f.DefineDataProperty("name", e.vm.ToValue(n), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		_ = o.DefineDataProperty(n, f, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	}
	_ = e.vm.GlobalObject().DefineDataProperty(name, o, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// enter starts every API function: a call that was abandoned after its
// timeout must not reach the host any more.
func (e *env) enter(op string) {
	if e.abandoned.Load() {
		e.throw(fmt.Errorf("%s: the call has been abandoned after its timeout", op))
	}
}

func (e *env) throwType(format string, args ...any) {
	panic(e.vm.NewTypeError("%s", fmt.Sprintf(format, args...)))
}

// throw throws a host error into the script as an Error whose Go error
// stays reachable: event.ScriptError.Err unwraps to it when uncaught.
func (e *env) throw(err error) {
	o := e.vm.NewGoError(err)
	_ = o.Set("name", "Error")
	panic(o)
}

// origin returns the position of the script code calling an API
// function.
func (e *env) origin() diag.Position {
	e.stackBuf = e.vm.CaptureCallStack(4, e.stackBuf[:0])
	for i := range e.stackBuf {
		if p := e.stackBuf[i].Position(); p.Line > 0 {
			return e.position(p)
		}
	}
	return diag.Position{Rule: e.cfg.opts.Rule, File: e.cfg.p.name}
}

// position returns where pos is in the rule's file, naming the rule.
func (e *env) position(pos file.Position) diag.Position {
	p := e.cfg.p.position(pos)
	p.Rule = e.cfg.opts.Rule
	return p
}

// json converts an argument to JSON data or throws a TypeError naming the
// offending path: "patch: spec.replicas is NaN".
func (e *env) json(op string, v goja.Value, root string) any {
	x, err := e.toJSON(v, root)
	if err != nil {
		e.throwType("%s: %v", op, err)
	}
	return x
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

// str reads an optional string property.
func (e *env) str(op string, o *goja.Object, key, what string) string {
	v := o.Get(key)
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	if !goja.IsString(v) {
		e.throwType("%s: %s%s must be a string", op, what, key)
	}
	return v.String()
}

// canonicalJSON encodes JSON data with sorted keys and without HTML
// escaping.
func canonicalJSON(x any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(x); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// kreact.hash(value): hex SHA-256 of the value's canonical JSON.
func (e *env) hash(call goja.FunctionCall) goja.Value {
	e.enter("hash")
	data, err := canonicalJSON(e.json("hash", call.Argument(0), "value"))
	if err != nil {
		e.throwType("hash: %v", err)
	}
	sum := sha256.Sum256(data)
	return e.vm.ToValue(hex.EncodeToString(sum[:]))
}

// kreact.replica(): {name, leader}, the replica the script runs on.
func (e *env) replica(goja.FunctionCall) goja.Value {
	e.enter("replica")
	r := Replica{Leader: true}
	if f := e.cfg.opts.Replica; f != nil {
		r = f()
	}
	o := e.vm.NewObject()
	_ = o.Set("name", r.Name)
	_ = o.Set("leader", r.Leader)
	return o
}
