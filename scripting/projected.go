package scripting

import (
	"fmt"
	"reflect"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/projection"
)

// Strict views: how `kreact test` finds the reads of a script that a
// projection (spec.watch[].fields) leaves without a value. Under kreact
// run such a read gives undefined, silently, as for a field the object
// does not have; a test knows the whole object and reports it.
//
// A strict view shows the cut-down object exactly as the plain view does
// (same keys, same values, undefined for what was dropped), so that the
// script behaves as under kreact run; it only also tells Strict.Report
// about each read of a key that the cut-down object lacks and the whole
// object has. Below a path the projection keeps whole, the values are
// plain views: nothing can be missing there.

// Strict asks for strict views of an Event's objects; see Event.Strict.
type Strict struct {
	// Fields is the projection that Event.Object and Event.OldObject
	// were cut down with (projection.Fields.Apply).
	Fields projection.Fields
	// Object and OldObject are the whole objects they were cut from;
	// nil for an object that was not cut.
	Object, OldObject *unstructured.Unstructured
	// Where names the projection in reports ("spec.watch[0].fields"),
	// and WherePos is where it is written.
	Where    string
	WherePos diag.Position
	// Report is called for every read of a path that Fields dropped
	// and the whole object has, on the goroutine that runs the script,
	// which may outlive the call that was abandoned at its timeout.
	Report func(OutsideRead)
}

// OutsideRead is a read of a path that a projection dropped.
type OutsideRead struct {
	// Pos is where the script read it: where kreact validate places the
	// same read (ReadPath.Pos, the start of the chain), else where goja
	// was when the script read it.
	Pos diag.Position
	// Handler is the handler that read it, "onUpdate".
	Handler string
	// Path is the path read, rooted at the handler's parameter as the
	// script names it (ReadName): "cm.data"; as the documentation names
	// it ("newObj.spec.template") when the parameter is not a plain
	// identifier.
	Path string
	// Where and WherePos are Strict's.
	Where    string
	WherePos diag.Position
}

// String formats the read as `kreact test` reports it:
// "rule.yaml:20:9: onUpdate read newObj.spec.template, which
// spec.watch[0].fields does not keep (rule.yaml:7:15)".
func (r OutsideRead) String() string {
	return fmt.Sprintf("%s: %s read %s, which %s does not keep (%s)", r.Pos, r.Handler, r.Path, r.Where, r.WherePos)
}

// eventObject is e.object for the objects an event hands to a handler:
// strict views when the event asks for them. old marks OldObject.
func (e *env) eventObject(ev *Event, u *unstructured.Unstructured, old bool) goja.Value {
	if ev.Strict == nil {
		return e.object(u)
	}
	return e.strictObject(ev, u, old)
}

func (e *env) strictObject(ev *Event, u *unstructured.Unstructured, old bool) goja.Value {
	s := ev.Strict
	// The object's parameter: its place among objectParams, and the
	// documentation's name for it.
	whole, param, name := s.Object, 0, "obj"
	switch {
	case old:
		whole, name = s.OldObject, "oldObj"
	case ev.Type == Update:
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
	s     *Strict
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
	v.s.Report(OutsideRead{Pos: pos, Handler: e.handler, Path: ReadName(v.name, path), Where: v.s.Where, WherePos: v.s.WherePos})
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
