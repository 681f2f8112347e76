package event

import (
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/projection"
)

// Strict views are how `kreact test` finds the reads of a script that a
// projection (spec.watch[].fields) leaves without a value; package
// scripting builds them (scripting/projected.go). These are what a caller
// asks for and what it is told.

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
	// same read (scripting.ReadPath.Pos, the start of the chain), else where goja
	// was when the script read it.
	Pos diag.Position
	// Handler is the handler that read it, "onUpdate".
	Handler string
	// Path is the path read, rooted at the handler's parameter as the
	// script names it (scripting.ReadName): "cm.data"; as the documentation names
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
