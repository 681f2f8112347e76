package scripting

import (
	"errors"
	"fmt"
	"slices"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/event"
)

// Admission handlers run while the API server waits, before a change is
// stored: onValidate(req, ctx) allows it or denies it with a message, and
// onMutate(req, ctx) returns the changes to make. They are named like the
// other handlers (on + what happens), and receive the whole request rather
// than (obj, ctx): an admission decision depends on the operation and on
// who asks, not only on the object.
//
// They have no side effects, as their webhook declares (sideEffects:
// None): the API server may call them for a dry run, call them again, or
// reject the change after they allowed it. So actions and timers are
// refused at the call, with an error saying so; reading the cache
// (kreact.get, kreact.list) is allowed.

// errAdmissionSideEffect explains why an admission handler cannot queue
// actions.
var errAdmissionSideEffect = errors.New("admission handlers cannot queue actions or timers: they run before the change is stored and must have no side effects (react in onAdd or onUpdate instead)")

// queuing wraps fn, the kreact function op that queues an action or a
// timer, so that an admission handler's call to it throws before its
// arguments are looked at.
func (e *env) queuing(op string, fn native) native {
	return func(call goja.FunctionCall) goja.Value {
		if e.ev != nil && e.ev.Type.Admission() {
			e.throw(fmt.Errorf("%s in %s: %w", op, e.handler, errAdmissionSideEffect))
		}
		return fn(call)
	}
}

// reqView is the req argument of an admission handler: read-only, like
// ctx. The objects are views of the request's, converted when read. It
// holds what it shows rather than the event, which the runtime reuses for
// the next call while a script may keep req.
type reqView struct {
	e        *env
	req      event.AdmissionRequest
	obj, old *unstructured.Unstructured
	resource string
	// object, oldObject and userInfo are kept once read, so that
	// req.object === req.object.
	object, oldObject, userInfo goja.Value
}

var reqKeys = []string{"operation", "name", "namespace", "resource", "subResource", "object", "oldObject", "dryRun", "userInfo"}

// admissionRequest returns the req argument of ev's admission handler.
func (e *env) admissionRequest(ev *event.Event) goja.Value {
	r := &reqView{e: e, obj: ev.Object, old: ev.OldObject, resource: ev.Resource.GVR.GroupResource().String()}
	if ev.Admission != nil {
		r.req = *ev.Admission
	}
	return e.vm.NewDynamicObject(r)
}

func (r *reqView) Get(key string) goja.Value {
	vm := r.e.vm
	a := &r.req
	switch key {
	case "operation":
		return vm.ToValue(a.Operation)
	case "name":
		return vm.ToValue(a.Name)
	case "namespace":
		return vm.ToValue(a.Namespace)
	case "resource":
		return vm.ToValue(r.resource)
	case "subResource":
		return vm.ToValue(a.SubResource)
	case "dryRun":
		return vm.ToValue(a.DryRun)
	case "object":
		if r.object == nil {
			r.object = r.e.object(r.obj)
		}
		return r.object
	case "oldObject":
		if r.oldObject == nil {
			r.oldObject = r.e.object(r.old)
		}
		return r.oldObject
	case "userInfo":
		if r.userInfo == nil {
			info := a.UserInfo
			if info == nil {
				info = map[string]any{}
			}
			r.userInfo = r.e.wrap(info)
		}
		return r.userInfo
	}
	return nil
}

func (r *reqView) Has(key string) bool { return slices.Contains(reqKeys, key) }
func (r *reqView) Keys() []string      { return reqKeys }

func (r *reqView) Set(string, goja.Value) bool { panic(r.e.vm.NewTypeError(readOnlyMessage)) }
func (r *reqView) Delete(string) bool          { panic(r.e.vm.NewTypeError(readOnlyMessage)) }

// decide records what an admission handler returned as the call's
// event.Verdict, or fails the call when it returned something else.
func (e *env) decide(t event.Type, ret goja.Value) error {
	none := ret == nil || goja.IsUndefined(ret) || goja.IsNull(ret)
	switch t {
	case event.Validate:
		switch {
		case none || ret.StrictEquals(e.vm.ToValue(true)):
		case goja.IsString(ret) && ret.String() != "":
			e.verdict = event.Verdict{Denied: true, Message: ret.String()}
		default:
			return fmt.Errorf("onValidate returned %s: return a message to deny the request, or nothing (or true) to allow it", e.describeValue(ret))
		}
	case event.Mutate:
		if none {
			return nil
		}
		o, ok := ret.(*goja.Object)
		if !ok {
			return fmt.Errorf("onMutate returned %s: return a JSON merge patch (an object), JSON patch operations (an array), or nothing", e.describeValue(ret))
		}
		x, err := e.toJSON(o, "the change")
		if err != nil {
			return fmt.Errorf("onMutate: %w", err)
		}
		e.verdict = event.Verdict{Change: x}
	}
	return nil
}

// describeValue names a returned value in an error: its type, and the
// value for short scalars.
func (e *env) describeValue(v goja.Value) string {
	switch {
	case goja.IsString(v):
		if v.String() == "" {
			return "an empty string"
		}
	case isObject(v):
		return "an object"
	}
	return fmt.Sprintf("%s %s", v.ExportType(), e.safeString(v))
}
