package scripting

import (
	"encoding/json"
	"reflect"
	"slices"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/event"
)

// readOnlyMessage is the TypeError a script gets when it writes to a view.
const readOnlyMessage = "object is read-only; use kreact.clone(obj)"

// The views below show Go data (an informer's objects) to a script without
// copying it and without letting the script change it. Each is a goja
// DynamicObject or DynamicArray: reads convert on demand, nested maps and
// slices are wrapped lazily and the wrapper is kept so that obj.spec ===
// obj.spec; every write or delete throws a TypeError.

// objectView is a read-only view of a map[string]any. A call makes a few
// (see newObjectView), so it is kept small: what few views need (their
// sorted keys, more than two children) is apart, in rest.
type objectView struct {
	e    *env
	m    map[string]any
	kids children
}

// minViewChunk and maxViewChunk bound how many objectViews
// env.newObjectView allocates at once.
const minViewChunk, maxViewChunk = 4, 64

type child struct {
	key string
	v   *goja.Object
}

// children are the views of a map's maps and slices that a script has
// read, kept so that obj.spec === obj.spec. A call reads one or two of a
// map's children, usually: those are kept inline, sparing an allocation
// each.
type children struct {
	first [2]child
	rest  *viewRest
}

// viewRest is what an objectView rarely needs.
type viewRest struct {
	// more are the children after the first two.
	more []child
	// keys are the map's keys, sorted, once a script enumerated them.
	keys []string
}

func (c *children) get(key string) *goja.Object {
	for i := range c.first {
		if c.first[i].v == nil {
			return nil
		}
		if c.first[i].key == key {
			return c.first[i].v
		}
	}
	if c.rest == nil {
		return nil
	}
	for _, k := range c.rest.more {
		if k.key == key {
			return k.v
		}
	}
	return nil
}

func (c *children) add(key string, v *goja.Object) {
	for i := range c.first {
		if c.first[i].v == nil {
			c.first[i] = child{key, v}
			return
		}
	}
	if c.rest == nil {
		c.rest = &viewRest{}
	}
	c.rest.more = append(c.rest.more, child{key, v})
}

var (
	objectViewType  = reflect.TypeOf((*objectView)(nil))
	arrayViewType   = reflect.TypeOf((*arrayView)(nil))
	listViewType    = reflect.TypeOf((*listView)(nil))
	stringsViewType = reflect.TypeOf((*stringsView)(nil))
)

func (o *objectView) Get(key string) goja.Value {
	x, ok := o.m[key]
	if !ok {
		return nil
	}
	switch x.(type) {
	case map[string]any, []any:
		if v := o.kids.get(key); v != nil {
			return v
		}
		v := o.e.wrap(x).(*goja.Object)
		o.kids.add(key, v)
		return v
	}
	return o.e.scalar(x)
}

func (o *objectView) Has(key string) bool {
	_, ok := o.m[key]
	return ok
}

func (o *objectView) Keys() []string {
	if o.kids.rest == nil {
		o.kids.rest = &viewRest{}
	}
	r := o.kids.rest
	if r.keys == nil {
		r.keys = make([]string, 0, len(o.m))
		for k := range o.m {
			r.keys = append(r.keys, k)
		}
		// Go maps have no order; sorted keys make Object.keys and
		// JSON.stringify deterministic.
		slices.Sort(r.keys)
	}
	return r.keys
}

func (o *objectView) Set(string, goja.Value) bool { panic(o.e.vm.NewTypeError(readOnlyMessage)) }
func (o *objectView) Delete(string) bool          { panic(o.e.vm.NewTypeError(readOnlyMessage)) }

// arrayView is a read-only view of a []any.
type arrayView struct {
	e    *env
	s    []any
	kids []goja.Value
}

func (a *arrayView) Len() int { return len(a.s) }

func (a *arrayView) Get(i int) goja.Value {
	if i < 0 || i >= len(a.s) {
		return nil
	}
	switch x := a.s[i].(type) {
	case map[string]any, []any:
		if a.kids == nil {
			a.kids = make([]goja.Value, len(a.s))
		}
		if a.kids[i] == nil {
			a.kids[i] = a.e.wrap(x)
		}
		return a.kids[i]
	default:
		return a.e.scalar(x)
	}
}

func (a *arrayView) Set(int, goja.Value) bool { panic(a.e.vm.NewTypeError(readOnlyMessage)) }
func (a *arrayView) SetLen(int) bool          { panic(a.e.vm.NewTypeError(readOnlyMessage)) }

// listView is a read-only array of objects, as kreact.list returns them.
type listView struct {
	e     *env
	items []*unstructured.Unstructured
	kids  []goja.Value
}

func (l *listView) Len() int { return len(l.items) }

func (l *listView) Get(i int) goja.Value {
	if i < 0 || i >= len(l.items) {
		return nil
	}
	if l.kids == nil {
		l.kids = make([]goja.Value, len(l.items))
	}
	if l.kids[i] == nil {
		l.kids[i] = l.e.object(l.items[i])
	}
	return l.kids[i]
}

func (l *listView) Set(int, goja.Value) bool { panic(l.e.vm.NewTypeError(readOnlyMessage)) }
func (l *listView) SetLen(int) bool          { panic(l.e.vm.NewTypeError(readOnlyMessage)) }

// stringsView is a read-only array of strings (ctx.changed).
type stringsView struct {
	e *env
	s []string
}

func (a *stringsView) Len() int { return len(a.s) }

func (a *stringsView) Get(i int) goja.Value {
	if i < 0 || i >= len(a.s) {
		return nil
	}
	return a.e.vm.ToValue(a.s[i])
}

func (a *stringsView) Set(int, goja.Value) bool { panic(a.e.vm.NewTypeError(readOnlyMessage)) }
func (a *stringsView) SetLen(int) bool          { panic(a.e.vm.NewTypeError(readOnlyMessage)) }

// ctxView is the read-only ctx argument of a handler. It holds what it
// shows rather than the event, which the runtime reuses for the next call
// while a script may keep ctx.
type ctxView struct {
	e        *env
	typ      event.Type
	initial  bool
	changed  []string
	resource schema.GroupResource
	// changedValue is ctx.changed once read.
	changedValue goja.Value
}

func newCtxView(e *env, ev *event.Event) *ctxView {
	return &ctxView{e: e, typ: ev.Type, initial: ev.Initial, changed: ev.Changed, resource: ev.Resource.GVR.GroupResource()}
}

var ctxKeys = []string{"rule", "event", "initial", "changed", "resource"}

func (c *ctxView) Get(key string) goja.Value {
	switch key {
	case "rule":
		return c.e.vm.ToValue(c.e.cfg.opts.Rule)
	case "event":
		return c.e.vm.ToValue(string(c.typ))
	case "initial":
		return c.e.vm.ToValue(c.initial)
	case "changed":
		if c.changedValue == nil {
			c.changedValue = c.e.vm.NewDynamicArray(&stringsView{e: c.e, s: c.changed})
		}
		return c.changedValue
	case "resource":
		return c.e.vm.ToValue(c.resource.String())
	}
	return nil
}

func (c *ctxView) Has(key string) bool { return slices.Contains(ctxKeys, key) }
func (c *ctxView) Keys() []string      { return ctxKeys }

func (c *ctxView) Set(string, goja.Value) bool { panic(c.e.vm.NewTypeError(readOnlyMessage)) }
func (c *ctxView) Delete(string) bool          { panic(c.e.vm.NewTypeError(readOnlyMessage)) }

// object returns a read-only view of u, or null for nil.
func (e *env) object(u *unstructured.Unstructured) goja.Value {
	if u == nil || u.Object == nil {
		return goja.Null()
	}
	v := e.newObjectView(u.Object)
	o := e.vm.NewDynamicObject(v)
	if e.ev != nil && e.argViewsMade < len(e.argViews) {
		// The first views of a handler call are of its arguments.
		e.argViews[e.argViewsMade] = argView{o, v}
		e.argViewsMade++
	}
	return o
}

// argView is a view that env.object made, and its script object.
type argView struct {
	o *goja.Object
	v *objectView
}

// newObjectView returns a view of m. A call makes several (the objects,
// and each nested map it reads), usually about as many as the call before:
// they are allocated together, in a chunk the size of the previous call's
// views. A chunk stays as long as one of its views does.
func (e *env) newObjectView(m map[string]any) *objectView {
	if len(e.views) == cap(e.views) {
		e.views = make([]objectView, 0, min(max(e.viewsBefore-e.viewsMade, minViewChunk), maxViewChunk))
	}
	e.viewsMade++
	e.views = append(e.views, objectView{e: e, m: m})
	return &e.views[len(e.views)-1]
}

// endViews ends a call's chunk of views: the runtime does not keep what
// the call's views show (objects the cache may have dropped) once it has
// returned.
func (e *env) endViews() {
	e.views = nil
	e.argViews, e.argViewsMade = [2]argView{}, 0
	e.viewsBefore, e.viewsMade = e.viewsMade, 0
}

// wrap returns a read-only view of a map or slice.
func (e *env) wrap(x any) goja.Value {
	switch x := x.(type) {
	case map[string]any:
		return e.vm.NewDynamicObject(e.newObjectView(x))
	case []any:
		return e.vm.NewDynamicArray(&arrayView{e: e, s: x})
	}
	return e.scalar(x)
}

// scalar converts a JSON scalar as unstructured holds them. Anything else
// (a typed map or slice that a careless producer left in an object) goes
// through encoding/json so that the script still sees plain, read-only data.
func (e *env) scalar(x any) goja.Value {
	switch x := x.(type) {
	case nil:
		return goja.Null()
	case string, int64, float64, bool, int, int32, uint32:
		return e.vm.ToValue(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return e.vm.ToValue(i)
		}
		f, _ := x.Float64()
		return e.vm.ToValue(f)
	case map[string]any, []any:
		return e.wrap(x)
	}
	b, err := json.Marshal(x)
	if err != nil {
		return goja.Null()
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return goja.Null()
	}
	return e.wrap(v)
}
