package delivery

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
)

// Change is one notification about an object, as an informer reports it.
type Change struct {
	// Type is Add, Update or Delete.
	Type event.Type
	// Object is the added object, the new state of an update, or the last
	// known state of a deleted object.
	Object *unstructured.Unstructured
	// Old is the previous state of an update.
	Old *unstructured.Unstructured
	// Initial is true for an add from the informer's initial list.
	Initial bool
	// Resource is the watched resource the object belongs to.
	Resource apiresource.Resource
	// Finalize marks a Delete that is an object held by the rule's
	// finalizer (spec.finalizer): onDelete, then the finalizer's removal.
	Finalize bool
}

// objectKey identifies an object as seen through one informer of the
// plan (source). The same object seen by two informers of a rule (two
// spec.watch entries with different selectors) has two keys, as it had two
// streams of changes. The tick of spec.every has a key of its own.
type objectKey struct {
	source          int
	namespace, name string
	tick            bool
}

// wants is which handlers a rule will have called: it lists the event in
// spec.events and its script declares the handler.
// timer is whether the script declares onTimer.
type wants struct{ add, update, delete, timer bool }

// has reports whether the rule has the handler of t.
func (w wants) has(t event.Type) bool {
	switch t {
	case event.Add:
		return w.add
	case event.Update:
		return w.update
	case event.Delete:
		return w.delete
	}
	return false
}

// entry is the work waiting for one object. Its state is what the rule
// has not handled yet; it never holds more than one incarnation's delete
// and one add or update, whatever number of changes it folded.
type entry struct {
	resource apiresource.Resource
	// owedDelete is the last known state of an object the script saw and
	// that was deleted: onDelete is owed, before anything else.
	owedDelete *unstructured.Unstructured
	// kind is Add, Update, Tick, or "" when no such call waits.
	kind event.Type
	// seen is, for an update, the object the script last saw.
	seen *unstructured.Unstructured
	// latest is the newest state of the object.
	latest  *unstructured.Unstructured
	initial bool
	// every holds, for delivery "every", each change in order; the fields
	// above are unused then.
	every []Change

	// finalize is the latest state of an object held by the rule's
	// finalizer: onDelete and the finalizer's removal are owed.
	finalize *unstructured.Unstructured

	// timer is the object's kreact.after, if any (see timer.go).
	timer
}

// maxSpare bounds Core.spare: objects that wait at once beyond it
// allocate their entries, as without spares. It is small because every
// rule keeps its own (8 spares are 2.5 KiB; a thousand rules keep that
// each), and at the rates where an allocation per change counts, few
// objects wait at once.
const maxSpare = 8

// newEntryLocked returns an empty entry for an object of resource, a
// spare one if there is one.
func (d *Core) newEntryLocked(resource apiresource.Resource) *entry {
	n := len(d.spare)
	if n == 0 {
		return &entry{resource: resource}
	}
	e := d.spare[n-1]
	d.spare[n-1] = nil
	d.spare = d.spare[:n-1]
	e.resource = resource
	return e
}

// spareLocked keeps e, an entry no longer in pending that nothing else
// refers to, for newEntryLocked.
func (d *Core) spareLocked(e *entry) {
	if len(d.spare) < maxSpare {
		*e = entry{}
		d.spare = append(d.spare, e)
	}
}

// empty reports whether the entry holds nothing, not even a timer.
func (e *entry) empty() bool {
	return !e.hasChange() && !e.timer.set()
}

// hasChange reports whether a change waits for a call.
func (e *entry) hasChange() bool {
	return e.owedDelete != nil || e.finalize != nil || e.kind != "" || len(e.every) > 0
}

// hasCall reports whether a call is due at now: a change, or a timer.
func (e *entry) hasCall(now time.Time) bool {
	return e.hasChange() || e.timer.due(now)
}

// merge folds change c into the entry (delivery "latest").
func (e *entry) merge(c Change, w wants) {
	if c.Resource.GVR.Resource != "" {
		e.resource = c.Resource
	}
	switch c.Type {
	case event.Tick:
		e.kind = event.Tick
	case event.Add:
		if w.add {
			e.kind, e.seen, e.latest, e.initial = event.Add, nil, c.Object, c.Initial
		}
	case event.Update:
		switch e.kind {
		case event.Add, event.Update:
			e.latest = c.Object
		case "":
			if w.update {
				e.kind, e.seen, e.latest = event.Update, c.Old, c.Object
			}
		}
	case event.Delete:
		if c.Finalize {
			// Held by the finalizer: whatever waited for the live object
			// is moot, but onDelete is owed even if this kreact never
			// saw it (an earlier one added the finalizer).
			e.kind, e.seen, e.latest, e.initial = "", nil, nil, false
			e.finalize = c.Object
			return
		}
		// Gone for good: a finalization that waited is a plain delete.
		e.finalize = nil
		switch e.kind {
		case event.Add:
			// The script never saw this incarnation: nothing to tell it.
			e.kind, e.latest, e.initial = "", nil, false
			return
		case event.Update:
			e.kind, e.seen, e.latest = "", nil, nil
		}
		if w.delete {
			e.owedDelete = c.Object
		}
	}
}

// replay returns the entry's state as the changes that produce it, so
// that it can be merged behind another state (see Core.restore).
func (e *entry) replay() []Change {
	var out []Change
	if e.owedDelete != nil {
		out = append(out, Change{Type: event.Delete, Object: e.owedDelete, Resource: e.resource})
	}
	if e.finalize != nil {
		out = append(out, Change{Type: event.Delete, Object: e.finalize, Resource: e.resource, Finalize: true})
	}
	switch e.kind {
	case event.Add:
		out = append(out, Change{Type: event.Add, Object: e.latest, Initial: e.initial, Resource: e.resource})
	case event.Update:
		out = append(out, Change{Type: event.Update, Old: e.seen, Object: e.latest, Resource: e.resource})
	case event.Tick:
		out = append(out, Change{Type: event.Tick})
	}
	return out
}

// take removes the next call from the entry (delivery "latest"): an owed
// delete first, then the add, update or tick. It returns the change that
// restores what it took, and false when the entry holds no call (an
// update whose net change is only in ignored paths is consumed so, and
// returned as the change).
func (e *entry) take(ignore []string) (event.Event, Change, bool) {
	if d := e.owedDelete; d != nil {
		e.owedDelete = nil
		c := Change{Type: event.Delete, Object: d, Resource: e.resource}
		return event.Event{Type: event.Delete, Object: d, Resource: e.resource}, c, true
	}
	if f := e.finalize; f != nil {
		e.finalize = nil
		c := Change{Type: event.Delete, Object: f, Resource: e.resource, Finalize: true}
		return event.Event{Type: event.Delete, Object: f, Resource: e.resource}, c, true
	}
	kind, seen, latest, initial := e.kind, e.seen, e.latest, e.initial
	e.kind, e.seen, e.latest, e.initial = "", nil, nil, false
	switch kind {
	case event.Tick:
		return event.Event{Type: event.Tick}, Change{Type: event.Tick}, true
	case event.Add:
		c := Change{Type: event.Add, Object: latest, Initial: initial, Resource: e.resource}
		return event.Event{Type: event.Add, Object: latest, Initial: initial, Resource: e.resource}, c, true
	case event.Update:
		changed := event.ChangedPaths(seen.Object, latest.Object, ignore)
		if len(changed) == 0 {
			// The update is consumed; what it was, for the trace.
			return event.Event{}, Change{Type: event.Update, Old: seen, Object: latest, Resource: e.resource}, false
		}
		c := Change{Type: event.Update, Old: seen, Object: latest, Resource: e.resource}
		return event.Event{Type: event.Update, OldObject: seen, Object: latest, Changed: changed, Resource: e.resource}, c, true
	}
	return event.Event{}, Change{}, false
}

// takeEvery removes the oldest change (delivery "every"). An update that
// changes only ignored paths is consumed without a call.
func (e *entry) takeEvery(ignore []string) (event.Event, Change, bool) {
	c := e.every[0]
	e.every[0] = Change{}
	e.every = e.every[1:]
	ev := event.Event{Type: c.Type, Object: c.Object, Initial: c.Initial, Resource: c.Resource}
	if c.Type == event.Update {
		ev.OldObject = c.Old
		ev.Changed = event.ChangedPaths(c.Old.Object, c.Object.Object, ignore)
		if len(ev.Changed) == 0 {
			// The update is consumed; what it was, for the trace.
			return event.Event{}, c, false
		}
	}
	return ev, c, true
}
