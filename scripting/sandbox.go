package scripting

import (
	"fmt"
	"reflect"
	"sync"

	"github.com/dop251/goja"
)

// The sandbox: what install changes in goja before a script runs, so that
// a script can neither escape the checks Compile makes nor get past its
// limits: no code built from strings (noDynamicCode), a JSON.parse bounded
// in nesting and size, and read-only views whose prototype cannot be
// changed. The built-ins that allocate much in one step are capped apart
// (capAllocations, memory.go).

// boundJSONParse makes JSON.parse refuse text nested deeper than
// MaxJSONNesting before goja's recursive parser sees it.
func (e *env) boundJSONParse() {
	json := e.vm.Get("JSON").ToObject(e.vm)
	// The Go function, not the replaced object: see capped.
	parse := nativeOf(json.Get("parse"))
	if parse == nil {
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
		return parse(goja.FunctionCall{This: call.This, Arguments: args})
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
	check := func(v goja.Value) {
		if o, ok := v.(*goja.Object); ok && isView(o.ExportType()) {
			panic(vm.NewTypeError(readOnlyMessage))
		}
	}
	// guard wraps fn, called with this and the arguments, after check of
	// the value at of.
	// The Go functions, not the replaced objects: see capped.
	guard := func(name string, fn func(goja.FunctionCall) goja.Value, of func(goja.FunctionCall) goja.Value) *goja.Object {
		f := vm.ToValue(func(call goja.FunctionCall) goja.Value {
			check(of(call))
			return fn(call)
		}).(*goja.Object)
		_ = f.DefineDataProperty("name", vm.ToValue(name), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
		return f
	}
	first := func(call goja.FunctionCall) goja.Value { return call.Argument(0) }
	this := func(call goja.FunctionCall) goja.Value { return call.This }
	for _, global := range []string{"Object", "Reflect"} {
		o := vm.Get(global).ToObject(vm)
		fn := nativeOf(o.Get("setPrototypeOf"))
		if fn == nil {
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
	set := nativeOf(desc.Get("set"))
	if set == nil {
		panic("scripting: Object.prototype.__proto__ has no setter")
	}
	if err := proto.DefineAccessorProperty("__proto__", desc.Get("get"), guard("set __proto__", set, this), goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: guarding __proto__: %v", err))
	}
}

// isView reports whether t is the type of a read-only view.
func isView(t reflect.Type) bool {
	switch t {
	case reflect.TypeFor[*objectView](), reflect.TypeFor[*arrayView](), reflect.TypeFor[*listView](),
		reflect.TypeFor[*stringsView](), reflect.TypeFor[*ctxView](), reflect.TypeFor[*reqView](), strictViewType:
		return true
	}
	return false
}

// noDynamicCodeProgram is noDynamicCode compiled once per process: a
// Program is immutable and runs in any runtime, and the function it
// defines keeps its Program, which every runtime then shares.
var noDynamicCodeProgram = sync.OnceValue(func() *goja.Program {
	return goja.MustCompile("", noDynamicCode, false)
})

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
