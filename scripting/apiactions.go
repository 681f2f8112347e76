package scripting

import (
	"fmt"
	"slices"
	"strings"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
)

// The kreact API for actions on objects: kreact.create, apply, patch,
// jsonPatch, delete and event. Each is permitted by the Host and becomes
// part of the call's transaction (event.Outcome.Actions); what an action
// is aimed at is read as apitarget.go says. Actions of other areas:
// setCondition (apiconditions.go), http (apihttp.go), once (apionce.go).

// installActions installs kreact.create, apply, patch, jsonPatch, delete
// and event, refused in admission handlers (queuing).
func (e *env) installActions(kreact calls) {
	kreact.add("create", e.queuing("create", e.createOrApply("create", actions.Create)))
	kreact.add("apply", e.queuing("apply", e.createOrApply("apply", actions.Apply)))
	kreact.add("patch", e.queuing("patch", e.patch))
	kreact.add("jsonPatch", e.queuing("jsonPatch", e.jsonPatch))
	kreact.add("delete", e.queuing("delete", e.delete))
	kreact.add("event", e.queuing("event", e.event))
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
