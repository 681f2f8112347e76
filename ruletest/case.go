package ruletest

import (
	"fmt"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/scripting"
)

// Object is an object of a fixture or an event, with the resource it
// belongs to.
type Object struct {
	// Pos is where the object is written.
	Pos diag.Position
	// Object is the object as written, with metadata.namespace set to
	// "default" for namespaced objects that name none.
	Object *unstructured.Unstructured
	// Resource is what apiVersion and kind resolve to.
	Resource apiresource.Resource
}

// Case is one entry of spec.cases.
type Case struct {
	// Name is unique within the file.
	Name string
	// Pos is where the case starts.
	Pos diag.Position
	// Now, if not zero, replaces the file's clock for this case.
	Now time.Time
	// Replica is what kreact.replica() returns in this case: by default
	// {Name: "kreact-test", Leader: true}, with the fields the case sets.
	Replica scripting.Replica
	// Fixtures are added to the file's fixtures (replacing any with the
	// same resource, namespace and name) before the events.
	Fixtures []Object
	// Events are what happens, in order.
	Events []Event
	// Expect is what should come of it.
	Expect Expect

	node *yaml.Node // the case's mapping, for Update
}

// Advance is the one type of spec.cases[].events that is no event a rule
// handles: it moves the clock forward, and the timers (kreact.after) and
// scheduled ticks that fall due on the way are fired in order, each at
// its own time. The other types are the rules' own: event.Add puts a
// new object into the cache and delivers it as an add, event.Update
// replaces an object of the cache (the old version is the cache's),
// event.Delete removes one and delivers its last version, and
// event.Tick calls a rule's onTick(ctx), as spec.every does.
const Advance event.Type = "advance"

// Admit is the type of an admission request (spec.cases[].events[].admit):
// it reaches the admission handlers (onValidate, onMutate) of the rules
// whose webhooks would intercept it, as the API server calls them, and
// changes nothing in the cache.
const Admit event.Type = "admit"

// AdmissionEvent is the request of an Admit event.
type AdmissionEvent struct {
	// Operation is CREATE, UPDATE or DELETE.
	Operation string
	// Object is the object of the request: the new object of a CREATE or
	// an UPDATE, the object (or reference) a DELETE names.
	Object Object
	// OldObject, if not nil, is the old object of an UPDATE or a DELETE;
	// nil means the cache's version.
	OldObject *Object
	// UserInfo is the requester ({username, groups, ...}); nil is none.
	UserInfo map[string]any
	// DryRun marks a request the API server will not store.
	DryRun bool
}

// Event is one entry of a case's events.
type Event struct {
	// Type is what the event does; see Advance.
	Type event.Type
	// Pos is where the event is written.
	Pos diag.Position
	// Object is the object added, updated or deleted. For a delete by
	// reference ({resource, namespace, name}) only Resource, namespace and
	// name are set.
	Object Object
	// Initial marks an add as part of a watch's initial list.
	Initial bool
	// Queued leaves the change waiting when the next event happens, as
	// under load: the rules catch up after the next event that is not
	// queued (or at the end of the case), with the changes coalesced as
	// kreact run coalesces them.
	Queued bool
	// Rule is the rule whose onTick a Tick calls.
	Rule string
	// Duration is how far an Advance moves the clock.
	Duration time.Duration
	// Admission is the request of an Admit.
	Admission *AdmissionEvent
}

// Expect is a case's expectation.
type Expect struct {
	// Actions are the actions the rules must ask for, in order. An empty
	// list (or none) expects no action.
	Actions []ExpectedAction
	// Errors are substrings of the script errors that must occur, one per
	// error, in order. None means no script error may occur.
	Errors []string
	// Logs are substrings that must occur, in order, among the log
	// records of the scripts; other records may come between them. Each
	// uses up the record it matches.
	Logs []string
	// LogsContain are substrings that must each occur in some log record,
	// in any order; several may match the same record.
	LogsContain []string
	// Partial makes every object and patch of Actions a partial
	// expectation (ExpectedAction.Partial).
	Partial bool
	// IgnoreOtherActions makes Actions a subsequence of what the rules
	// asked for: each must occur, in order, and actions not listed are
	// ignored. False means the lists match one for one.
	IgnoreOtherActions bool
	// Admission are the answers the admission handlers must give to the
	// case's Admit events, in order; nil (not listed) checks none, an
	// empty list expects none. rule, handler and allowed are always
	// compared, message, patch and warnings when listed.
	Admission []ExpectedAction
}

// ExpectedAction is one expected action: the fields the test lists, in
// canonical order. verb, resource and name are always compared (absent
// means empty); every other field only when listed.
type ExpectedAction struct {
	Pos    diag.Position
	Fields Fields
	// Partial compares object and patch as a subset: the keys listed
	// must be there with matching values, others may be too. Lists match
	// element by element and must have the same length.
	Partial bool

	partialSet bool // the action says partial, which Expect.Partial does not override
}

// Error is a problem found while running a case that makes it fail
// without reaching its expectation: an event that cannot apply to the
// cache, such as an update of an object that is not there.
type Error = diag.Error

func problem(pos diag.Position, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...)}
}
