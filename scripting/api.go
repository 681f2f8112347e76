package scripting

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/dop251/goja"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/source"
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
		"clone":     e.clone,
		"get":       e.get,
		"list":      e.list,
		"create":    e.createOrApply("create", actions.Create),
		"apply":     e.createOrApply("apply", actions.Apply),
		"patch":     e.patch,
		"jsonPatch": e.jsonPatch,
		"delete":    e.delete,
		"event":     e.event,
		"http":      e.http,
		"hash":      e.hash,
		"now":       e.now,
		"after":     e.after,
		"log":       e.logf("log", slog.LevelInfo),
		"warn":      e.logf("warn", slog.LevelWarn),
		"error":     e.logf("error", slog.LevelError),
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
		reflect.TypeFor[*stringsView](): true, reflect.TypeFor[*ctxView](): true,
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
// stays reachable: ScriptError.Err unwraps to it when uncaught.
func (e *env) throw(err error) {
	o := e.vm.NewGoError(err)
	_ = o.Set("name", "Error")
	panic(o)
}

// origin returns the position of the script code calling an API
// function.
func (e *env) origin() source.Position {
	e.stackBuf = e.vm.CaptureCallStack(4, e.stackBuf[:0])
	for i := range e.stackBuf {
		if p := e.stackBuf[i].Position(); p.Line > 0 {
			return e.position(p)
		}
	}
	return source.Position{Rule: e.cfg.opts.Rule, File: e.cfg.p.name}
}

// position returns where pos is in the rule's file, naming the rule.
func (e *env) position(pos file.Position) source.Position {
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

// target is what an action acts on.
type target struct {
	res             apiresource.Resource
	namespace, name string
	uid             types.UID
}

func (t *target) String() string {
	if t.namespace == "" {
		return t.res.GVR.GroupResource().String() + " " + t.name
	}
	return t.res.GVR.GroupResource().String() + " " + t.namespace + "/" + t.name
}

// target reads an action's target: an object (apiVersion, kind,
// metadata.namespace/name/uid), {resource, namespace, name} or
// {apiVersion, kind, namespace, name}.
func (e *env) target(op string, v goja.Value) target {
	o, ok := v.(*goja.Object)
	if !ok {
		e.throwType("%s: target must be an object or a reference like {resource, namespace, name}", op)
	}
	var t target
	if ref := e.str(op, o, "resource", "target "); ref != "" {
		res, err := e.cfg.host.ResolveResource(ref)
		if err != nil {
			e.throw(fmt.Errorf("%s: resolve %q: %w", op, ref, err))
		}
		t.res = res
		t.namespace = e.str(op, o, "namespace", "target ")
		t.name = e.str(op, o, "name", "target ")
	} else {
		apiVersion := e.str(op, o, "apiVersion", "target ")
		kind := e.str(op, o, "kind", "target ")
		if apiVersion == "" || kind == "" {
			e.throwType("%s: target needs apiVersion and kind, or resource", op)
		}
		res, err := e.cfg.host.ResolveKind(apiVersion, kind)
		if err != nil {
			e.throw(fmt.Errorf("%s: resolve %s %s: %w", op, apiVersion, kind, err))
		}
		t.res = res
		if md, ok := o.Get("metadata").(*goja.Object); ok {
			t.namespace = e.str(op, md, "namespace", "target metadata.")
			t.name = e.str(op, md, "name", "target metadata.")
			t.uid = types.UID(e.str(op, md, "uid", "target metadata."))
		} else {
			t.namespace = e.str(op, o, "namespace", "target ")
			t.name = e.str(op, o, "name", "target ")
		}
	}
	if t.name == "" {
		e.throwType("%s: target has no name", op)
	}
	e.scope(op, &t)
	return t
}

// scope checks the namespace against the resource's scope.
func (e *env) scope(op string, t *target) {
	switch {
	case t.res.Namespaced && t.namespace == "":
		e.throwType("%s: a namespace is required for %s", op, t.res.GVR.GroupResource().String())
	case !t.res.Namespaced:
		t.namespace = ""
	}
}

func (e *env) action(verb actions.Verb, t *target) actions.Action {
	return actions.Action{
		Rule:       e.cfg.opts.Rule,
		Verb:       verb,
		Resource:   t.res.GVR,
		Kind:       t.res.Kind,
		APIVersion: t.res.GVR.GroupVersion().String(),
		Namespaced: t.res.Namespaced,
		Namespace:  t.namespace,
		Name:       t.name,
		UID:        t.uid,
		DryRun:     e.cfg.opts.DryRun,
		Origin:     e.origin(),
	}
}

// enqueue adds an action to the call's transaction once the host permits
// it; a refusal is thrown. Nothing leaves the runtime until the call has
// returned normally (see Runtime.Call).
func (e *env) enqueue(op, what string, a actions.Action) goja.Value {
	if e.handler == "" {
		// The top level runs once per runtime, and again after a
		// timeout: an action there would be repeated unpredictably.
		e.throw(fmt.Errorf("%s: actions can only be requested from a handler", op))
	}
	if len(e.pending) >= e.cfg.opts.MaxActions {
		e.throw(fmt.Errorf("%s: more than %d actions in one call (spec.maxActions)", op, e.cfg.opts.MaxActions))
	}
	a.Rule = e.cfg.opts.Rule
	if err := e.cfg.host.Permit(a); err != nil {
		e.throw(fmt.Errorf("%s %s: %w", op, what, err))
	}
	e.pending = append(e.pending, a)
	return goja.Undefined()
}

// kreact.clone(value): a plain, writable deep copy.
func (e *env) clone(call goja.FunctionCall) goja.Value {
	e.enter("clone")
	v := call.Argument(0)
	o, ok := v.(*goja.Object)
	if !ok {
		return v
	}
	switch o.ExportType() {
	case objectViewType:
		return e.fromJSON(o.Export().(*objectView).m)
	case arrayViewType:
		return e.fromJSON(o.Export().(*arrayView).s)
	}
	return e.fromJSON(e.json("clone", v, "value"))
}

// kreact.get(resource, namespace, name): a read-only object or null.
func (e *env) get(call goja.FunctionCall) goja.Value {
	e.enter("get")
	ref, ns, name := call.Argument(0), call.Argument(1), call.Argument(2)
	if !goja.IsString(ref) || !goja.IsString(name) || !(goja.IsString(ns) || goja.IsNull(ns) || goja.IsUndefined(ns)) {
		e.throwType("get: want get(resource, namespace, name) with strings")
	}
	res, err := e.cfg.host.ResolveResource(ref.String())
	if err != nil {
		e.throw(fmt.Errorf("get: resolve %q: %w", ref.String(), err))
	}
	t := target{res: res, name: name.String()}
	if goja.IsString(ns) {
		t.namespace = ns.String()
	}
	e.scope("get", &t)
	obj, err := e.cfg.host.Get(res, t.namespace, t.name)
	if err != nil {
		e.throw(fmt.Errorf("get %s: %w", t.String(), err))
	}
	return e.object(obj)
}

// kreact.list(resource, {namespace, labelSelector}): a read-only array.
func (e *env) list(call goja.FunctionCall) goja.Value {
	e.enter("list")
	ref := call.Argument(0)
	if !goja.IsString(ref) {
		e.throwType("list: resource must be a string")
	}
	var ns, sel string
	switch o := call.Argument(1).(type) {
	case *goja.Object:
		ns = e.str("list", o, "namespace", "")
		sel = e.str("list", o, "labelSelector", "")
	default:
		if a := call.Argument(1); !goja.IsUndefined(a) && !goja.IsNull(a) {
			e.throwType("list: options must be an object like {namespace, labelSelector}")
		}
	}
	selector := labels.Everything()
	if sel != "" {
		var err error
		if selector, err = labels.Parse(sel); err != nil {
			e.throwType("list: labelSelector: %v", err)
		}
	}
	res, err := e.cfg.host.ResolveResource(ref.String())
	if err != nil {
		e.throw(fmt.Errorf("list: resolve %q: %w", ref.String(), err))
	}
	if !res.Namespaced {
		ns = ""
	}
	items, err := e.cfg.host.List(res, ns, selector)
	if err != nil {
		e.throw(fmt.Errorf("list %s: %w", res.GVR.GroupResource().String(), err))
	}
	return e.vm.NewDynamicArray(&listView{e: e, items: items})
}

// kreact.create(obj) and kreact.apply(obj, options?).
func (e *env) createOrApply(op string, verb actions.Verb) native {
	return func(call goja.FunctionCall) goja.Value {
		e.enter(op)
		arg := call.Argument(0)
		m, ok := e.json(op, arg, "object").(map[string]any)
		if !ok || !isObject(arg) {
			e.throwType("%s: the argument must be an object", op)
		}
		apiVersion, _ := m["apiVersion"].(string)
		kind, _ := m["kind"].(string)
		if apiVersion == "" || kind == "" {
			e.throwType("%s: the object needs apiVersion and kind", op)
		}
		md, _ := m["metadata"].(map[string]any)
		name, _ := md["name"].(string)
		namespace, _ := md["namespace"].(string)
		generateName, _ := md["generateName"].(string)
		switch {
		case name == "" && verb == actions.Apply:
			e.throwType("%s: the object needs metadata.name", op)
		case name == "" && generateName == "":
			e.throwType("%s: the object needs metadata.name or metadata.generateName", op)
		}
		res, err := e.cfg.host.ResolveKind(apiVersion, kind)
		if err != nil {
			e.throw(fmt.Errorf("%s: resolve %s %s: %w", op, apiVersion, kind, err))
		}
		t := target{res: res, namespace: namespace, name: name}
		if res.Namespaced && namespace == "" {
			e.throwType("%s: metadata.namespace is required for %s", op, res.GVR.GroupResource().String())
		}
		e.scope(op, &t)
		if verb == actions.Apply {
			// The API server refuses an apply that carries them; they come
			// along when a script applies a clone of a cached object.
			delete(md, "managedFields")
		}
		a := e.action(verb, &t)
		a.Object = m
		what := t.String()
		if name == "" {
			what += generateName + "*"
		}
		if verb == actions.Apply {
			a.Subresource = e.subresource(op, call.Argument(1))
		}
		return e.enqueue(op, withSub(what, a.Subresource), a)
	}
}

// kreact.patch(target, mergePatch, options?).
func (e *env) patch(call goja.FunctionCall) goja.Value {
	e.enter("patch")
	t := e.target("patch", call.Argument(0))
	arg := call.Argument(1)
	p, ok := e.json("patch", arg, "patch").(map[string]any)
	if !ok {
		e.throwType("patch: the patch must be an object")
	}
	data, err := json.Marshal(p)
	if err != nil {
		e.throwType("patch: %v", err)
	}
	a := e.action(actions.Patch, &t)
	a.Subresource = e.subresource("patch", call.Argument(2))
	a.PatchType = types.MergePatchType
	a.PatchData = data
	return e.enqueue("patch", withSub(t.String(), a.Subresource), a)
}

var jsonPatchOps = []string{"add", "remove", "replace", "move", "copy", "test"}

var subresources = []string{"status", "scale"}

// subresource reads the optional options argument of apply, patch and
// jsonPatch: {subresource: "status"}.
func (e *env) subresource(op string, v goja.Value) string {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return ""
	}
	o, ok := v.(*goja.Object)
	if !ok {
		e.throwType(`%s: options must be an object like {subresource: "status"}`, op)
	}
	sub := e.str(op, o, "subresource", "options.")
	if sub != "" && !slices.Contains(subresources, sub) {
		e.throwType(`%s: options.subresource must be "status" or "scale", not %q`, op, sub)
	}
	return sub
}

// withSub names an action's target with its subresource, for messages.
func withSub(what, sub string) string {
	if sub == "" {
		return what
	}
	return what + " (" + sub + ")"
}

// kreact.jsonPatch(target, ops, options?).
func (e *env) jsonPatch(call goja.FunctionCall) goja.Value {
	e.enter("jsonPatch")
	t := e.target("jsonPatch", call.Argument(0))
	ops, ok := e.json("jsonPatch", call.Argument(1), "ops").([]any)
	if !ok || len(ops) == 0 {
		e.throwType("jsonPatch: ops must be a non-empty array of operations")
	}
	for i, x := range ops {
		op, ok := x.(map[string]any)
		if !ok {
			e.throwType("jsonPatch: ops[%d] must be an object", i)
		}
		name, _ := op["op"].(string)
		if !slices.Contains(jsonPatchOps, name) {
			e.throwType("jsonPatch: ops[%d].op must be one of %s", i, strings.Join(jsonPatchOps, ", "))
		}
		if !isPointer(op["path"]) {
			e.throwType(`jsonPatch: ops[%d].path must be a JSON pointer ("" or "/...")`, i)
		}
		switch name {
		case "add", "replace", "test":
			if _, ok := op["value"]; !ok {
				e.throwType("jsonPatch: ops[%d] (%s) needs a value", i, name)
			}
		case "move", "copy":
			if !isPointer(op["from"]) {
				e.throwType(`jsonPatch: ops[%d].from must be a JSON pointer ("" or "/...")`, i)
			}
		}
	}
	data, err := json.Marshal(ops)
	if err != nil {
		e.throwType("jsonPatch: %v", err)
	}
	a := e.action(actions.Patch, &t)
	a.Subresource = e.subresource("jsonPatch", call.Argument(2))
	a.PatchType = types.JSONPatchType
	a.PatchData = data
	return e.enqueue("jsonPatch", withSub(t.String(), a.Subresource), a)
}

func isPointer(v any) bool {
	s, ok := v.(string)
	return ok && (s == "" || strings.HasPrefix(s, "/"))
}

// kreact.delete(target).
func (e *env) delete(call goja.FunctionCall) goja.Value {
	e.enter("delete")
	t := e.target("delete", call.Argument(0))
	return e.enqueue("delete", t.String(), e.action(actions.Delete, &t))
}

// kreact.event(target, {type, reason, message}).
func (e *env) event(call goja.FunctionCall) goja.Value {
	e.enter("event")
	t := e.target("event", call.Argument(0))
	o, ok := call.Argument(1).(*goja.Object)
	if !ok {
		e.throwType("event: want event(target, {type, reason, message})")
	}
	typ := e.str("event", o, "type", "")
	switch typ {
	case "":
		typ = "Normal"
	case "Normal", "Warning":
	default:
		e.throwType(`event: type must be "Normal" or "Warning", not %q`, typ)
	}
	reason := e.str("event", o, "reason", "")
	if reason == "" {
		e.throwType("event: reason is required")
	}
	a := e.action(actions.Event, &t)
	a.EventType = typ
	a.Reason = reason
	a.Message = e.str("event", o, "message", "")
	return e.enqueue("event", t.String(), a)
}

// kreact.http({url, method, headers, body}).
func (e *env) http(call goja.FunctionCall) goja.Value {
	e.enter("http")
	o, ok := call.Argument(0).(*goja.Object)
	if !ok {
		e.throwType("http: want http({url, method, headers, body})")
	}
	rawURL := e.str("http", o, "url", "")
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		e.throwType("http: url must be an absolute http or https URL, not %q", rawURL)
	}
	method := strings.ToUpper(e.str("http", o, "method", ""))
	if method == "" {
		method = "POST"
	}
	if !isToken(method) {
		e.throwType("http: invalid method %q", method)
	}
	req := &actions.HTTPRequest{Method: method, URL: u.String()}
	if h := o.Get("headers"); h != nil && !goja.IsUndefined(h) && !goja.IsNull(h) {
		hm, ok := e.json("http", h, "headers.").(map[string]any)
		if !ok {
			e.throwType("http: headers must be an object of strings")
		}
		req.Headers = make(map[string]string, len(hm))
		for k, v := range hm {
			s, ok := v.(string)
			if !ok || !isToken(k) || strings.ContainsAny(s, "\r\n") {
				e.throwType("http: header %q must be a valid name with a single-line string value", k)
			}
			req.Headers[k] = s
		}
	}
	switch body := o.Get("body"); {
	case body == nil || goja.IsUndefined(body):
	case goja.IsString(body):
		req.Body = []byte(body.String())
	default:
		data, err := canonicalJSON(e.json("http", body, "body."))
		if err != nil {
			e.throwType("http: body: %v", err)
		}
		req.Body = data
		if !hasHeader(req.Headers, "Content-Type") {
			if req.Headers == nil {
				req.Headers = map[string]string{}
			}
			req.Headers["Content-Type"] = "application/json"
		}
	}
	if len(req.Body) > maxValueSize {
		e.throwType("http: body is larger than %d bytes", maxValueSize)
	}
	a := actions.Action{
		Rule:    e.cfg.opts.Rule,
		Verb:    actions.HTTP,
		Request: req,
		DryRun:  e.cfg.opts.DryRun,
		Origin:  e.origin(),
	}
	return e.enqueue("http", method+" "+u.Redacted(), a)
}

func hasHeader(h map[string]string, name string) bool {
	for k := range h {
		if strings.EqualFold(k, name) {
			return true
		}
	}
	return false
}

// isToken reports whether s is an HTTP token (method, header name).
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
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

// kreact.now(): the host's clock as a Date.
func (e *env) now(goja.FunctionCall) goja.Value {
	e.enter("now")
	d, err := e.vm.New(e.date, e.vm.ToValue(e.cfg.host.Now().UnixMilli()))
	if err != nil {
		panic(err)
	}
	return d
}

// MaxTimerDelay bounds the delay of kreact.after.
const MaxTimerDelay = 366 * 24 * time.Hour

// kreact.after(obj, delay): call onTimer(obj, ctx) with the object's latest
// state once delay has passed. delay is a duration string ("90s", "10m",
// "1h30m"), a number of milliseconds, or a Date to call at. Part of the
// call's transaction; a later kreact.after of the object replaces it.
func (e *env) after(call goja.FunctionCall) goja.Value {
	e.enter("after")
	if e.handler == "" {
		e.throw(errors.New("after: timers can only be requested from a handler"))
	}
	ev := e.ev
	switch {
	case ev == nil || ev.Type == Tick || ev.Object == nil:
		e.throwType("after: %s has no object; a timer belongs to the object of the call", e.handler)
	case ev.Type == Delete:
		e.throwType("after: the object is deleted; its timers are dropped")
	case !e.cfg.p.HasHandler(Timer):
		e.throwType("after: the script declares no onTimer(obj, ctx) to call")
	}
	t := e.target("after", call.Argument(0))
	if t.res.GVR.GroupResource() != ev.Resource.GVR.GroupResource() || t.namespace != ev.Object.GetNamespace() || t.name != ev.Object.GetName() {
		e.throwType("after: %s is not the object of this call (%s); a timer belongs to the object of the call", t.String(), objectRef(ev))
	}
	d := e.delay(call.Argument(1))
	e.timer = &TimerRequest{Delay: d, Origin: e.origin()}
	return goja.Undefined()
}

// delay reads the delay of kreact.after.
func (e *env) delay(v goja.Value) time.Duration {
	var d time.Duration
	switch {
	case goja.IsString(v):
		var err error
		if d, err = time.ParseDuration(v.String()); err != nil {
			e.throwType("after: delay %q is not a duration such as \"90s\", \"10m\" or \"1h30m\"", v.String())
		}
	case goja.IsNumber(v):
		ms := v.ToFloat()
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			e.throwType("after: delay is %v; want milliseconds, a duration string or a Date", ms)
		}
		if ms > float64(MaxTimerDelay/time.Millisecond) {
			d = MaxTimerDelay + 1
		} else {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	default:
		o, ok := v.(*goja.Object)
		at, isTime := time.Time{}, false
		if ok {
			at, isTime = o.Export().(time.Time)
		}
		if !isTime {
			e.throwType("after: want after(obj, delay) with delay in milliseconds, a duration string (\"10m\") or a Date")
		}
		d = at.Sub(e.cfg.host.Now())
	}
	if d > MaxTimerDelay {
		e.throwType("after: delay is longer than %v", MaxTimerDelay)
	}
	return max(d, 0)
}

// objectRef names the object of an event as a target prints it.
func objectRef(ev *Event) string {
	t := target{res: ev.Resource, namespace: ev.Object.GetNamespace(), name: ev.Object.GetName()}
	return t.String()
}

// kreact.log(msg, fields?), kreact.warn, kreact.error.
func (e *env) logf(op string, level slog.Level) native {
	return func(call goja.FunctionCall) goja.Value {
		e.enter(op)
		msg := e.format(call.Argument(0))
		attrs := []slog.Attr{slog.String("rule", e.cfg.opts.Rule), slog.String("origin", e.origin().String())}
		if f, ok := call.Argument(1).(*goja.Object); ok {
			fields, ok := e.json(op, f, "fields").(map[string]any)
			if !ok {
				e.throwType("%s: fields must be an object", op)
			}
			keys := make([]string, 0, len(fields))
			for k := range fields {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				key := k
				if k == "rule" || k == "origin" {
					// Each attribute once: the record has these already.
					key = "field." + k
				}
				attrs = append(attrs, slog.Any(key, fields[k]))
			}
		}
		e.log(level, msg, attrs)
		return goja.Undefined()
	}
}

// console.log(...args) and friends.
func (e *env) console(level slog.Level) native {
	return func(call goja.FunctionCall) goja.Value {
		e.enter("console")
		parts := make([]string, len(call.Arguments))
		for i, a := range call.Arguments {
			parts[i] = e.format(a)
		}
		e.log(level, strings.Join(parts, " "),
			[]slog.Attr{slog.String("rule", e.cfg.opts.Rule), slog.String("origin", e.origin().String())})
		return goja.Undefined()
	}
}

// log writes a record, at most maxLogsPerCall per call.
func (e *env) log(level slog.Level, msg string, attrs []slog.Attr) {
	e.logs++
	switch {
	case e.logs == maxLogsPerCall+1:
		e.cfg.host.Log(slog.LevelWarn, fmt.Sprintf("more than %d log records in one call; dropping the rest", maxLogsPerCall), attrs[:2]...)
		return
	case e.logs > maxLogsPerCall:
		return
	}
	if len(msg) > maxLogSize {
		cut := maxLogSize
		for cut > 0 && !utf8.RuneStart(msg[cut]) {
			cut--
		}
		msg = msg[:cut] + "…"
	}
	e.cfg.host.Log(level, msg, attrs...)
}

// format renders a value for a log message: strings as they are, data as
// JSON, anything else as the script would print it.
func (e *env) format(v goja.Value) string {
	switch {
	case goja.IsString(v):
		return v.String()
	case !isObject(v):
		return e.safeString(v)
	}
	if _, ok := goja.AssertFunction(v); ok {
		return e.safeString(v)
	}
	x, err := e.toJSON(v, "value")
	if err != nil {
		return e.safeString(v)
	}
	b, err := canonicalJSON(x)
	if err != nil {
		return e.safeString(v)
	}
	return string(b)
}
