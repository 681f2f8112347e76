package scripting

import (
	"reflect"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/projection"
)

// Strict views: how `kreact test` finds the reads of a script that a
// projection (spec.watch[].fields) leaves without a value. Under kreact
// run such a read gives undefined, silently, as for a field the object
// does not have; a test knows the whole object and reports it.
//
// A strict view shows the cut-down object exactly as the plain view does
// (same keys, same values, undefined for what was dropped), so that the
// script behaves as under kreact run; it only also tells event.Strict.Report
// about each read of a key that the cut-down object lacks and the whole
// object has. Below a path the projection keeps whole, the values are
// plain views: nothing can be missing there.

// eventObject is e.object for the objects an event hands to a handler:
// strict views when the event asks for them. old marks OldObject.
func (e *env) eventObject(ev *event.Event, u *unstructured.Unstructured, old bool) goja.Value {
	if ev.Strict == nil {
		return e.object(u)
	}
	return e.strictObject(ev, u, old)
}

func (e *env) strictObject(ev *event.Event, u *unstructured.Unstructured, old bool) goja.Value {
	s := ev.Strict
	// The object's parameter: its place among objectParams, and the
	// documentation's name for it.
	whole, param, name := s.Object, 0, "obj"
	switch {
	case old:
		whole, name = s.OldObject, "oldObj"
	case ev.Type == event.Update:
		param, name = 1, "newObj"
	}
	if n := e.cfg.p.paramName(ev.Type.Handler(), param); n != "" {
		name = n
	}
	if u == nil || u.Object == nil || whole == nil || s.Fields.Whole() {
		return e.object(u)
	}
	return e.vm.NewDynamicObject(&strictView{
		plain: objectView{e: e, m: u.Object},
		s:     s,
		whole: whole.Object,
		name:  name,
	})
}

// strictView is a read-only view of a map of a cut-down object, at path,
// which the projection reaches but does not keep whole.
type strictView struct {
	plain objectView
	s     *event.Strict
	whole map[string]any // the map at path in the whole object
	path  projection.Path
	name  string
	kids  children // strict views of the maps below
}

var strictViewType = reflect.TypeOf((*strictView)(nil))

func (v *strictView) Get(key string) goja.Value {
	x, ok := v.plain.m[key]
	if !ok {
		v.check(key)
		return nil
	}
	m, isMap := x.(map[string]any)
	p := append(v.path[:len(v.path):len(v.path)], key)
	if !isMap || v.s.Fields.Keeps(p) {
		return v.plain.Get(key)
	}
	if kid := v.kids.get(key); kid != nil {
		return kid
	}
	whole, _ := v.whole[key].(map[string]any)
	kid := v.plain.e.vm.NewDynamicObject(&strictView{plain: objectView{e: v.plain.e, m: m}, s: v.s, whole: whole, path: p, name: v.name})
	v.kids.add(key, kid)
	return kid
}

// check reports a read of key, which the cut-down map lacks, when the
// whole object has it.
func (v *strictView) check(key string) {
	if _, had := v.whole[key]; !had || v.s.Report == nil {
		return
	}
	path := projection.Path(append(v.path[:len(v.path):len(v.path)], key))
	e := v.plain.e
	pos := e.cfg.p.placeRead(e.handler, v.name, path, e.origin())
	v.s.Report(event.OutsideRead{Pos: pos, Handler: e.handler, Path: ReadName(v.name, path), Where: v.s.Where, WherePos: v.s.WherePos})
}

func (v *strictView) Has(key string) bool {
	if v.plain.Has(key) {
		return true
	}
	v.check(key)
	return false
}

func (v *strictView) Keys() []string { return v.plain.Keys() }

func (v *strictView) Set(string, goja.Value) bool { return v.plain.Set("", nil) }
func (v *strictView) Delete(string) bool          { return v.plain.Delete("") }
