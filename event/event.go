package event

import (
	"errors"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/governor"
)

// Type is the kind of change a handler reacts to.
type Type string

// The event types, one per handler.
const (
	// Add calls onAdd(obj, ctx).
	Add Type = "add"
	// Update calls onUpdate(oldObj, newObj, ctx).
	Update Type = "update"
	// Delete calls onDelete(obj, ctx).
	Delete Type = "delete"
	// Tick calls onTick(ctx), periodically (a rule's spec.every), with no
	// object: for sweeps such as TTL expiry, where no change arrives when
	// the time is up.
	Tick Type = "tick"
	// Timer calls onTimer(obj, ctx) with the latest state of an object
	// for which an earlier call asked kreact.after(obj, delay).
	Timer Type = "timer"
	// Validate calls onValidate(req, ctx) with an admission request
	// (Event.Admission), before the API server stores the change: the
	// handler allows it, or denies it with a message (Verdict).
	Validate Type = "validate"
	// Mutate calls onMutate(req, ctx) with an admission request, before
	// the API server stores the change: the handler returns the changes
	// to make to the object (Verdict.Change).
	Mutate Type = "mutate"
)

// NumTypes is how many event types there are: the length of arrays
// indexed by Type.Index.
const NumTypes = 7

// Types returns every event type, in the order of their handlers.
func Types() []Type { return []Type{Add, Update, Delete, Tick, Timer, Validate, Mutate} }

var handlerNames = [NumTypes]string{"onAdd", "onUpdate", "onDelete", "onTick", "onTimer", "onValidate", "onMutate"}

// Admission reports whether t is an admission event (Validate, Mutate):
// its handler runs before a change is stored, and may not queue actions.
func (t Type) Admission() bool { return t == Validate || t == Mutate }

// Index returns t's place in Types, for arrays of NumTypes, and false for
// an unknown type.
func (t Type) Index() (int, bool) {
	switch t {
	case Add:
		return 0, true
	case Update:
		return 1, true
	case Delete:
		return 2, true
	case Tick:
		return 3, true
	case Timer:
		return 4, true
	case Validate:
		return 5, true
	case Mutate:
		return 6, true
	}
	return 0, false
}

// Handler returns the name of the script function that handles t, or "" for
// an unknown type.
func (t Type) Handler() string {
	if i, ok := t.Index(); ok {
		return handlerNames[i]
	}
	return ""
}

// Event is one change to hand to a rule's handler. The objects usually come
// from an informer cache: scripts see them through read-only views and
// package scripting never writes to them.
type Event struct {
	// Type selects the handler.
	Type Type
	// Object is the object added or deleted, the new object of an
	// update, or the object of a timer. Nil is passed to the script as
	// null. Unused for Tick.
	Object *unstructured.Unstructured
	// OldObject is the previous object of an update; unused otherwise.
	OldObject *unstructured.Unstructured
	// Initial is true for an add that comes from the initial list.
	Initial bool
	// Changed lists the paths that changed in an update, as ChangedPaths
	// reports them. The caller decides whether to call at all; an empty
	// list is passed on as is.
	Changed []string
	// Resource is the watched resource the object belongs to; zero for
	// Tick.
	Resource apiresource.Resource
	// Strict, if not nil, shows Object and OldObject, cut down by a
	// projection, through views that report reads of what it dropped
	// (scripting/projected.go). kreact test sets it; kreact run does not.
	Strict *Strict
	// Admission is the request of a Validate or Mutate event, whose
	// Object is the object to be stored (nil for a DELETE) and OldObject
	// the stored one (nil for a CREATE). Unused for other types.
	Admission *AdmissionRequest
}

// AdmissionRequest is what an admission handler learns of the request
// besides its objects: onValidate and onMutate receive it as req, with
// req.object and req.oldObject.
type AdmissionRequest struct {
	// Operation is CREATE, UPDATE, DELETE or CONNECT.
	Operation string
	// Namespace and Name name the object; Name may be empty on CREATE
	// (metadata.generateName).
	Namespace, Name string
	// SubResource is the subresource written ("status", "scale"), or "".
	SubResource string
	// DryRun is true when the API server will not store the change: a
	// handler must not count on it happening.
	DryRun bool
	// UserInfo is the requester, as the API server describes it
	// (username, uid, groups, extra); nil shows as an empty object.
	UserInfo map[string]any
}

// AdmissionResult is what became of an admission request, for metrics
// and logs: the handler's Verdict in its rule's mode, or its rule's
// failure policy when the call failed.
type AdmissionResult string

// The results of an admission request.
const (
	// Allowed: the handler allowed it unchanged.
	Allowed AdmissionResult = "allowed"
	// Denied: onValidate denied it (enforce mode).
	Denied AdmissionResult = "denied"
	// Patched: onMutate changed the object (enforce mode).
	Patched AdmissionResult = "patched"
	// WouldDeny and WouldPatch: audit mode let the request through
	// unchanged where enforce mode would have denied or changed it.
	WouldDeny  AdmissionResult = "would-deny"
	WouldPatch AdmissionResult = "would-patch"
	// AdmissionFailed: the handler failed (threw, timed out, returned
	// something kreact cannot use); the rule's failure policy answered.
	AdmissionFailed AdmissionResult = "failed"
)

// Verdict is what an admission handler decided: the result of a call
// that returned normally.
type Verdict struct {
	// Denied is true when onValidate returned a message; Message is that
	// message.
	Denied  bool
	Message string
	// Change is what onMutate returned, as JSON data: nil for no change,
	// a map for a JSON merge patch (RFC 7386), a slice for JSON patch
	// operations (RFC 6902). Package admission turns it into the JSON
	// patch of the response.
	Change any
}

// Outcome is what a call that returned normally asked for: its
// transaction.
type Outcome struct {
	// Actions are the actions, in the order the script asked for them.
	Actions []actions.Action
	// Timer, if not nil, is the last kreact.after of the call: call
	// onTimer for the call's object after Timer.Delay.
	Timer *TimerRequest
	// Once, if not nil, is the patch that marks the call's object done
	// for the rule's kreact.once (OnceAnnotation): to be sent only once
	// every action in Actions has succeeded.
	Once *actions.Action
	// Verdict is the decision of an admission handler (Validate,
	// Mutate); zero for other handlers.
	Verdict Verdict
}

// TimerRequest is a kreact.after(obj, delay) of a call.
type TimerRequest struct {
	// Delay is how long after the call onTimer is due; never negative.
	Delay time.Duration
	// Origin is where the script asked for it.
	Origin diag.Position
}

// ErrClosed is returned by a Runtime's Call after its Close (package
// scripting).
var ErrClosed = errors.New("runtime closed")

// ErrAbandoned is what a Runtime's Invoke returns, on the goroutine of a
// Serve, for a call that Serve abandoned (see scripting.Runtime.Serve):
// its error went to Serve's abandoned function, and the caller must not
// act on it again.
var ErrAbandoned = errors.New("call abandoned: stuck in a built-in function")

// ErrStuck is the Err of the ScriptError that a Runtime's Call returns
// without running the script while earlier calls of the same Runtime are
// still stuck in built-in code after their timeout.
var ErrStuck = errors.New("earlier calls are still stuck in built-in code")

// ScriptError is a script failure: an uncaught exception, a timeout, a stack
// overflow. Its Error method names the position, the message, the rule and
// the handler: "file:line:col: message (rule r, onUpdate)".
type ScriptError struct {
	// Rule is the rule's name (scripting.RuntimeOptions.Rule).
	Rule string
	// Handler is the handler that failed, or "" for the script's top level.
	Handler string
	// Position is where, in the rule's file, the innermost script frame
	// was when the exception was thrown or the script was stopped; the
	// file alone when no frame is known.
	Position diag.Position
	// Message is the exception as the script would print it, e.g.
	// "TypeError: patch: spec.replicas is NaN", or what stopped it.
	Message string
	// Stack lists the script frames, innermost first, one
	// "at function (file:line:col)" per line.
	Stack string
	// Timeout is true when the call ran out of time.
	Timeout bool
	// Memory is true when the call was stopped for allocating past its
	// memory limit (scripting.RuntimeOptions.MemoryLimit). A built-in
	// refused up front is an exception (a RangeError), not this.
	Memory bool
	// CPULimit is true when the call was stopped for using more CPU time
	// than scripting.RuntimeOptions.CPULimit.
	CPULimit bool
	// Allocated is, for a call stopped for its memory limit, what it was
	// charged with: the new memory its thread took, or, when Message says
	// so, what the process allocated while it ran. Callers pace a rule
	// whose calls keep making that much garbage by it (package delivery).
	Allocated int64
	// CPU is the processor time the failed call used, where the
	// operating system tells (Linux); for a call abandoned in a built-in,
	// the time from its start until it was abandoned. Callers pace a rule
	// whose calls keep failing by it (package delivery).
	CPU time.Duration
	// Err is the underlying error: a goja error, ErrStuck, or the error
	// of a scripting.Host method that the script did not catch.
	Err error
}

// Error implements error.
func (e *ScriptError) Error() string {
	var b strings.Builder
	if e.Position.File != "" || e.Position.Line > 0 {
		b.WriteString(e.Position.String())
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	b.WriteString(" (rule ")
	b.WriteString(e.Rule)
	b.WriteString(", ")
	if e.Handler != "" {
		b.WriteString(e.Handler)
	} else {
		b.WriteString("top level")
	}
	b.WriteByte(')')
	return b.String()
}

// Unwrap returns Err.
func (e *ScriptError) Unwrap() error { return e.Err }

// Hogged reports whether the call was stopped at its CPU limit, or at its
// timeout or memory limit while computing: it had used the 2ms of CPU
// after which its thread is demoted (governor.DemoteAfter), which a call
// that waits (for kreact.http, say) does not. Such a call costs the rules
// beside it in the same process (see Memory in package scripting's doc), and
// package isolation moves its rule to a process of its own.
func (e *ScriptError) Hogged() bool {
	return e.CPULimit || (e.Timeout || e.Memory) && e.CPU >= governor.DemoteAfter
}

// Hogged reports whether err is, or wraps, a ScriptError that Hogged.
func Hogged(err error) bool {
	var se *ScriptError
	return errors.As(err, &se) && se.Hogged()
}
