package rules

import (
	"reflect"

	"github.com/kreact/kreact/diag"
)

// positionType is the type whose line and column blankPositions clears.
var positionType = reflect.TypeFor[diag.Position]()

// blankPositions clears the line and column of every position a rule
// object's rule holds, keeping the file (the object's Source): they count
// the lines of the YAML that parseObject renders, which no user sees, and
// a problem found later (an unknown resource, at Resolve) would print
// them as if they were the object's. The messages name the field instead.
// Every exported position is found by reflection, so that a field added
// to Rule is covered; Permission's unexported one is cleared by name.
func blankPositions(r *Rule) {
	blank(reflect.ValueOf(r).Elem())
	for i := range r.Permissions {
		p := &r.Permissions[i].namespacesPos
		*p = diag.Position{Rule: p.Rule, File: p.File}
	}
}

func blank(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		if v.Type() == positionType {
			if v.CanSet() {
				p := v.Interface().(diag.Position)
				v.Set(reflect.ValueOf(diag.Position{Rule: p.Rule, File: p.File}))
			}
			return
		}
		for i := range v.NumField() {
			if f := v.Field(i); f.CanSet() {
				blank(f)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			blank(v.Index(i))
		}
	case reflect.Pointer:
		if !v.IsNil() {
			blank(v.Elem())
		}
	}
}
