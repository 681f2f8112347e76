package scripting

import (
	"fmt"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/labels"
)

// The kreact API for reading the cluster: kreact.get and kreact.list,
// answered by the Host from the informers' caches, as read-only views.
// (kreact.owner reads too: apiowner.go.)

// installReads installs kreact.get and kreact.list.
func (e *env) installReads(kreact calls) {
	kreact.add("get", e.get)
	kreact.add("list", e.list)
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
