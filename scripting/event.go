package scripting

import (
	"errors"
	"log/slog"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/governor"
)

// EventType is the kind of change a handler reacts to.
type EventType string

// The event types, one per handler.
const (
	// Add calls onAdd(obj, ctx).
	Add EventType = "add"
	// Update calls onUpdate(oldObj, newObj, ctx).
	Update EventType = "update"
	// Delete calls onDelete(obj, ctx).
	Delete EventType = "delete"
	// Tick calls onTick(ctx), periodically (a rule's spec.every), with no
	// object: for sweeps such as TTL expiry, where no change arrives when
	// the time is up.
	Tick EventType = "tick"
	// Timer calls onTimer(obj, ctx) with the latest state of an object
	// for which an earlier call asked kreact.after(obj, delay).
	Timer EventType = "timer"
	// Validate calls onValidate(req, ctx) with an admission request
	// (Event.Admission), before the API server stores the change: the
	// handler allows it, or denies it with a message (Verdict).
	Validate EventType = "validate"
	// Mutate calls onMutate(req, ctx) with an admission request, before
	// the API server stores the change: the handler returns the changes
	// to make to the object (Verdict.Change).
	Mutate EventType = "mutate"
)

const numEventTypes = 7

// EventTypes returns every event type, in the order of their handlers.
func EventTypes() []EventType { return []EventType{Add, Update, Delete, Tick, Timer, Validate, Mutate} }

var handlerNames = [numEventTypes]string{"onAdd", "onUpdate", "onDelete", "onTick", "onTimer", "onValidate", "onMutate"}

// Admission reports whether t is an admission event (Validate, Mutate):
// its handler runs before a change is stored, and may not queue actions.
func (t EventType) Admission() bool { return t == Validate || t == Mutate }

func (t EventType) index() (int, bool) {
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
func (t EventType) Handler() string {
	if i, ok := t.index(); ok {
		return handlerNames[i]
	}
	return ""
}

// Event is one change to hand to a rule's handler. The objects usually come
// from an informer cache: scripts see them through read-only views and
// nothing in this package writes to them.
type Event struct {
	// Type selects the handler.
	Type EventType
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
	// (projected.go). kreact test sets it; kreact run does not.
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

// Host is what a script can reach outside its runtime. The engine implements
// it; tests use a fake. A Runtime calls it from the goroutine that runs the
// script (not the caller of Runtime.Call), one call at a time per Runtime;
// several Runtimes may share one Host. A method that blocks delays only the
// script: Call gives up on it after the timeout.
type Host interface {
	// ResolveResource maps a reference as kubectl takes it ("deploy",
	// "deployments.apps", "deployments.v1.apps") to a resource.
	ResolveResource(ref string) (apiresource.Resource, error)
	// ResolveKind maps an apiVersion and a kind to a resource.
	ResolveKind(apiVersion, kind string) (apiresource.Resource, error)
	// Get returns the named object, or nil and no error when it does not
	// exist. The returned object is not modified.
	Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error)
	// List returns the objects of res in namespace ("" for all namespaces)
	// that match selector. The returned objects are not modified.
	List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error)
	// Permit checks that the rule may ask for a (its declared permissions,
	// its allowed URLs). An error is thrown into the script as an
	// exception. Permit only checks: the actions a call asks for are
	// returned by Runtime.Call when the call succeeds, and are the
	// caller's to queue.
	Permit(a actions.Action) error
	// Log writes a log record on behalf of the script.
	Log(level slog.Level, msg string, attrs ...slog.Attr)
	// Now is the script's clock: kreact.now(), Date.now() and new Date().
	Now() time.Time
}

// ErrStuck is the Err of the ScriptError that Runtime.Call returns without
// running the script while earlier calls of the same Runtime are still stuck
// in built-in code after their timeout.
var ErrStuck = errors.New("earlier calls are still stuck in built-in code")

// ScriptError is a script failure: an uncaught exception, a timeout, a stack
// overflow. Its Error method names the position, the message, the rule and
// the handler: "file:line:col: message (rule r, onUpdate)".
type ScriptError struct {
	// Rule is RuntimeOptions.Rule.
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
	// memory limit (RuntimeOptions.MemoryLimit). A built-in refused up
	// front is an exception (a RangeError), not this.
	Memory bool
	// CPULimit is true when the call was stopped for using more CPU time
	// than RuntimeOptions.CPULimit.
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
	// of a Host method that the script did not catch.
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
// beside it in the same process (see Memory in the package doc), and
// package isolation moves its rule to a process of its own.
func (e *ScriptError) Hogged() bool {
	return e.CPULimit || (e.Timeout || e.Memory) && e.CPU >= governor.DemoteAfter
}

// describeStop records why the call was interrupted: the value it was
// interrupted with.
func (e *ScriptError) describeStop(stopped any) {
	switch v := stopped.(type) {
	case *governor.MemoryError:
		e.Memory, e.Allocated = true, v.Used
	case *governor.CPUError:
		e.CPULimit = true
	default:
		e.Timeout = true
	}
}

// Hogged reports whether err is, or wraps, a ScriptError that Hogged.
func Hogged(err error) bool {
	var se *ScriptError
	return errors.As(err, &se) && se.Hogged()
}
