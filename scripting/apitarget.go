package scripting

import (
	"fmt"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
)

// What an action is aimed at, and how it joins the call's transaction:
// shared by the areas that ask for actions (apiactions.go,
// apiconditions.go, apihttp.go, apionce.go) and timers (apitimers.go).

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
	if m, ok := e.viewMap(o); ok && e.viewTarget(op, m, &t) {
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

// viewMap returns the map behind a read-only view of an object. The
// call's own objects, the usual targets, are found among argViews:
// goja's Export, the way to any other view, allocates.
func (e *env) viewMap(o *goja.Object) (map[string]any, bool) {
	if o.ExportType() != objectViewType {
		return nil, false
	}
	for _, a := range e.argViews {
		if a.o == o {
			return a.v.m, true
		}
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
		APIVersion: e.apiVersion(t.res.GVR.GroupVersion()),
		Namespaced: t.res.Namespaced,
		Namespace:  t.namespace,
		Name:       t.name,
		UID:        t.uid,
		DryRun:     e.cfg.opts.DryRun,
		Origin:     e.origin(),
	}
}

// apiVersion is gv.String(), which builds a new string each time, kept
// for the next action: a rule's actions are mostly of one resource.
func (e *env) apiVersion(gv schema.GroupVersion) string {
	if e.lastGV != gv || e.lastAPIVersion == "" {
		e.lastGV, e.lastAPIVersion = gv, gv.String()
	}
	return e.lastAPIVersion
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
