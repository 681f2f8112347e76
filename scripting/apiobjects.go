package scripting

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
)

// The kreact API for objects: reading them from the cache (get, list,
// clone) and asking for actions on them (create, apply, patch, delete,
// event, http).

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
	if m, ok := viewMap(o); ok && e.viewTarget(op, m, &t) {
		e.scope(op, &t)
		return t
	}
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

// viewMap returns the map behind a read-only view of an object.
func viewMap(o *goja.Object) (map[string]any, bool) {
	if o.ExportType() != objectViewType {
		return nil, false
	}
	return o.Export().(*objectView).m, true
}

// viewTarget is target for an object the script got as a read-only view,
// the usual target (kreact.patch(obj, ...)): it reads the strings from the
// Go map rather than converting each field to a script value. It returns
// false, having set nothing, when a field is not a string or absent (a
// view of something unlike an object), so that target reports it.
func (e *env) viewTarget(op string, m map[string]any, t *target) bool {
	if _, ok := m["resource"]; ok {
		return false
	}
	apiVersion, ok1 := m["apiVersion"].(string)
	kind, ok2 := m["kind"].(string)
	md, ok3 := m["metadata"].(map[string]any)
	if !ok1 || !ok2 || !ok3 || apiVersion == "" || kind == "" {
		return false
	}
	var names [3]string
	for i, key := range [3]string{"namespace", "name", "uid"} {
		switch x := md[key].(type) {
		case string:
			names[i] = x
		case nil:
		default:
			return false
		}
	}
	if names[1] == "" {
		return false
	}
	res, err := e.cfg.host.ResolveKind(apiVersion, kind)
	if err != nil {
		e.throw(fmt.Errorf("%s: resolve %s %s: %w", op, apiVersion, kind, err))
	}
	*t = target{res: res, namespace: names[0], name: names[1], uid: types.UID(names[2])}
	return true
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
// it; a refusal is thrown, naming the target with what (called only then).
// Nothing leaves the runtime until the call has returned normally (see
// Runtime.Call).
func (e *env) enqueue(op string, what func() string, a actions.Action) goja.Value {
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
		e.throw(fmt.Errorf("%s %s: %w", op, what(), err))
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

// kreact.create(obj, options?) and kreact.apply(obj, options?); options
// are {owner} and, for apply, {subresource}.
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
		opts := call.Argument(1)
		var owner *ownerRef
		switch o, ok := opts.(*goja.Object); {
		case ok:
			owner = e.owner(op, o)
		case verb == actions.Create && !goja.IsUndefined(opts) && !goja.IsNull(opts):
			e.throwType("%s: options must be an object like {owner: obj}", op)
		}
		if owner != nil {
			if err := checkOwner(owner.t, t); err != nil {
				e.throwType("%s: %v", op, err)
			}
			if err := setOwner(m, *owner); err != nil {
				e.throwType("%s: %v", op, err)
			}
		}
		a := e.action(verb, &t)
		a.Object = m
		if verb == actions.Apply {
			a.Subresource = e.subresource(op, opts)
		}
		return e.enqueue(op, func() string {
			what := t.String()
			if name == "" {
				what += generateName + "*"
			}
			return withSub(what, a.Subresource)
		}, a)
	}
}

// kreact.patch(target, mergePatch, options?).
func (e *env) patch(call goja.FunctionCall) goja.Value {
	e.enter("patch")
	t := e.target("patch", call.Argument(0))
	// Encoded at once: the patch is not needed as data.
	data, err := e.encodeJSON(call.Argument(1), "patch")
	if err != nil {
		e.throwType("patch: %v", err)
	}
	if data[0] != '{' {
		e.throwType("patch: the patch must be an object")
	}
	return e.enqueuePatch("patch", &t, call.Argument(2), types.MergePatchType, data)
}

// enqueuePatch asks for a patch of type pt with body (JSON) of target t,
// or of its subresource sub.
func (e *env) enqueuePatch(op string, t *target, sub goja.Value, pt types.PatchType, data []byte) goja.Value {
	a := e.action(actions.Patch, t)
	a.Subresource = e.subresource(op, sub)
	a.PatchType = pt
	a.PatchData = data
	return e.enqueue(op, func() string { return withSub(t.String(), a.Subresource) }, a)
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
	data, buf, keys, err := marshalJSON(ops, e.jsonBuf, e.keyBuf)
	e.jsonBuf, e.keyBuf = buf, keys
	if err != nil {
		e.throwType("jsonPatch: %v", err)
	}
	return e.enqueuePatch("jsonPatch", &t, call.Argument(2), types.JSONPatchType, data)
}

func isPointer(v any) bool {
	s, ok := v.(string)
	return ok && (s == "" || strings.HasPrefix(s, "/"))
}

// kreact.delete(target).
func (e *env) delete(call goja.FunctionCall) goja.Value {
	e.enter("delete")
	t := e.target("delete", call.Argument(0))
	return e.enqueue("delete", t.String, e.action(actions.Delete, &t))
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
	return e.enqueue("event", t.String, a)
}

// kreact.setCondition(target, {type, status, reason, message,
// observedGeneration}): observedGeneration defaults to the target's
// metadata.generation when the target is an object that has one.
func (e *env) setCondition(call goja.FunctionCall) goja.Value {
	e.enter("setCondition")
	const op = "setCondition"
	t := e.target(op, call.Argument(0))
	o, ok := call.Argument(1).(*goja.Object)
	if !ok {
		e.throwType("%s: want setCondition(target, {type, status, reason, message, observedGeneration})", op)
	}
	c := actions.Condition{
		Type:    e.str(op, o, "type", "condition."),
		Status:  e.str(op, o, "status", "condition."),
		Reason:  e.str(op, o, "reason", "condition."),
		Message: e.str(op, o, "message", "condition."),
	}
	switch g := o.Get("observedGeneration"); {
	case g == nil || goja.IsUndefined(g) || goja.IsNull(g):
		c.ObservedGeneration = e.generation(call.Argument(0))
	case goja.IsNumber(g) && g.ToFloat() == float64(g.ToInteger()):
		c.ObservedGeneration = g.ToInteger()
	default:
		e.throwType("%s: condition.observedGeneration must be an integer", op)
	}
	if err := c.Validate(); err != nil {
		e.throwType("%s: condition %v", op, err)
	}
	a := e.action(actions.SetCondition, &t)
	a.Subresource = actions.ConditionSubresource(t.res)
	a.Condition = &c
	return e.enqueue(op, func() string { return withSub(t.String(), a.Subresource) }, a)
}

// generation is the metadata.generation of an object given as a target,
// or 0.
func (e *env) generation(v goja.Value) int64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	if m, ok := viewMap(o); ok {
		md, _ := m["metadata"].(map[string]any)
		switch g := md["generation"].(type) {
		case int64:
			return g
		case float64:
			return int64(g)
		}
		return 0
	}
	if md, ok := o.Get("metadata").(*goja.Object); ok {
		if g := md.Get("generation"); g != nil && goja.IsNumber(g) {
			return g.ToInteger()
		}
	}
	return 0
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
	return e.enqueue("http", func() string { return method + " " + u.Redacted() }, a)
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
