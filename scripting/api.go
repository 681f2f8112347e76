package scripting

import (
	"fmt"
	"slices"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"

	"github.com/kreact/kreact/diag"
)

type native = func(goja.FunctionCall) goja.Value

// install sets up the sandbox (sandbox.go) and the kreact and console
// globals, whose functions each area of the API installs from its own
// file. goja has no require, file system or network of its own; the only
// way out is the Host.
func (e *env) install() {
	vm := e.vm
	// eval and new Function parse at run time: no source map loading
	// there either.
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	vm.SetMaxCallStackSize(e.cfg.opts.MaxCallStackSize)
	vm.SetTimeSource(e.cfg.host.Now)
	// Kept before the script runs, which may replace it: see params.go.
	if proto := vm.ToValue(func(goja.FunctionCall) goja.Value { return nil }).(*goja.Object).Prototype(); proto != nil {
		e.fnToString, _ = goja.AssertFunction(proto.Get("toString"))
	}
	// Kept before the script can reassign the global.
	e.date = vm.Get("Date")
	// Code built from strings at run time (eval, the Function
	// constructors, reachable from any function's .constructor) would
	// escape every check Compile makes on a script; rules do not need it.
	if _, err := vm.RunProgram(noDynamicCodeProgram()); err != nil {
		panic(fmt.Sprintf("scripting: disabling dynamic code: %v", err))
	}
	e.boundJSONParse()
	e.lockViewPrototypes()
	e.capAllocations()

	kreact, console := calls{}, calls{}
	for _, install := range []func(calls){
		e.installReads, e.installActions, e.installConditions, e.installOwners,
		e.installOnce, e.installTimers, e.installHTTP, e.installValues,
		e.installClock, e.installReplica,
	} {
		install(kreact)
	}
	e.installLog(kreact, console)
	e.global("kreact", kreact)
	e.global("console", console)
}

// calls are the functions of a global object (kreact, console), by the
// name a script calls them by. Each area of the API installs its own
// (installReads in apireads.go, installActions in apiactions.go, ...).
type calls map[string]native

// add defines the function name; two areas defining one name is a bug.
func (c calls) add(name string, fn native) {
	if _, ok := c[name]; ok {
		panic("scripting: " + name + " is installed twice")
	}
	c[name] = fn
}

// global defines a read-only global object holding read-only functions.
// It builds the object of each function when a script first reads it: a
// function object costs a runtime about 600 bytes of heap that it keeps,
// and a rule calls a few of the API's functions, not all of them.
func (e *env) global(name string, fns calls) {
	names := make([]string, 0, len(fns))
	for n := range fns {
		names = append(names, n)
	}
	slices.Sort(names)
	api := &apiObject{vm: e.vm, names: names, fns: make([]native, len(names)), built: make([]*goja.Object, len(names))}
	for i, n := range names {
		api.fns[i] = fns[n]
	}
	o := e.vm.NewDynamicObject(api)
	_ = e.vm.GlobalObject().DefineDataProperty(name, o, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
}

// apiObject is a global object of functions (kreact, console), whose
// properties cannot be set, defined or deleted, and which builds each
// function's object the first time it is read, the same object every
// time after.
type apiObject struct {
	vm    *goja.Runtime
	names []string // sorted
	fns   []native
	built []*goja.Object
}

var _ goja.DynamicObject = (*apiObject)(nil)

func (a *apiObject) index(key string) (int, bool) { return slices.BinarySearch(a.names, key) }

func (a *apiObject) Get(key string) goja.Value {
	i, ok := a.index(key)
	if !ok {
		return nil
	}
	if f := a.built[i]; f != nil {
		return f
	}
	f := a.vm.ToValue(a.fns[i]).(*goja.Object)
	// ToValue names the function after the Go method; stacks should
	// show the script's name.
	_ = f.DefineDataProperty("name", a.vm.ToValue(key), goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	a.built[i] = f
	return f
}

// Set refuses: the functions are read-only, and no property is added.
func (a *apiObject) Set(string, goja.Value) bool { return false }

func (a *apiObject) Has(key string) bool {
	_, ok := a.index(key)
	return ok
}

// Delete refuses for the functions, and succeeds for any other name, as
// deleting a property an object does not have does.
func (a *apiObject) Delete(key string) bool { return !a.Has(key) }

func (a *apiObject) Keys() []string { return a.names }

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
