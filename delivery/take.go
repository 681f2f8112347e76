package delivery

import (
	"github.com/kreact/kreact/event"
)

// Taking a call: take makes an object's next call ready (a turn) from
// the changes that wait for it (takeLocked), with the newest state the
// cache holds (freshen); restore puts back a call that failed, for its
// retry.

// A turn is one object's turn at a worker: the call that take made ready
// for it, and then what call did with it, which settle acts on, as
// controller-runtime's reconcileHandler acts on a reconcile's result.
type turn struct {
	key objectKey
	ev  event.Event
	// taken is what the call consumes of the object's entry, which a
	// failed call restores.
	taken Change
}

// take makes the next call of key ready, or reports that there is none:
// nothing is left of its entry, another replica makes this tick, or the
// newest state changes nothing the rule looks at.
func (d *Core) take(key objectKey) (turn, bool) {
	d.mu.Lock()
	ev, taken, ok := d.takeLocked(key)
	d.mu.Unlock()
	if ok && key.tick && d.schedules != nil && !d.schedules.OwnsSchedules() {
		// Another replica makes this tick (spec.tickScope cluster).
		ok = false
	}
	if !ok {
		return turn{}, false
	}
	if ev, ok = d.freshen(key, ev); !ok || d.ownFinalizerOnly(ev) {
		return turn{}, false
	}
	return turn{key: key, ev: d.withMarker(key, ev), taken: taken}, true
}

// takeLocked removes the next call of key from its entry. An entry with
// more to do queues its key again (the workqueue hands it out once this
// call is done).
func (d *Core) takeLocked(key objectKey) (event.Event, Change, bool) {
	now := d.now()
	if key.tick {
		d.scheduleTickLocked(now)
	}
	e := d.pending[key]
	if e == nil {
		return event.Event{}, Change{}, false
	}
	var ev event.Event
	var taken Change
	ok := false
	for !ok && e.hasCall(now) {
		switch {
		case !e.hasChange():
			ev, taken = e.timer.take(e.resource)
			ok = true
		case d.every && !key.tick:
			ev, taken, ok = e.takeEvery(d.ignore)
			d.queued--
		default:
			ev, taken, ok = e.take(d.ignore)
		}
		if !ok && taken.Type == event.Update && d.traced() {
			d.traceIgnored(key, taken)
		}
	}
	switch {
	case e.empty():
		delete(d.pending, key)
		d.spareLocked(e)
	case e.hasCall(now):
		d.queue.Add(key)
	case !e.timer.at.IsZero():
		// Woken before its timer, which a later kreact.after moved.
		d.queue.AddAfter(key, e.timer.at.Sub(now))
	}
	return ev, taken, ok
}

// freshen replaces the object of an add or update (delivery "latest") by
// the newest state the cache holds of the same incarnation (same UID): the
// change that carries it is on its way, and calling with it spares a call,
// or an action that would be stale on arrival. Changes up to that state
// are then not delivered again (see seenAheadLocked). It returns false
// when the newest state changes nothing the rule looks at.
func (d *Core) freshen(key objectKey, ev event.Event) (event.Event, bool) {
	if d.opts.Cache == nil || key.tick {
		return ev, true
	}
	if ev.Type == event.Timer {
		// onTimer gets the latest state; its changes are delivered too.
		if newest, ok := d.opts.Cache.Get(key.source, key.namespace, key.name); ok && newest.GetUID() == ev.Object.GetUID() {
			ev.Object = newest
		}
		return ev, true
	}
	if d.every || (ev.Type != event.Add && ev.Type != event.Update) {
		return ev, true
	}
	newest, ok := d.opts.Cache.Newer(key.source, key.namespace, key.name, ev.Object.GetUID(), ev.Object.GetResourceVersion())
	if !ok {
		return ev, true
	}
	rv, parsed := resourceVersion(newest)
	if !parsed {
		return ev, true
	}
	d.mu.Lock()
	d.ahead[key] = rv
	d.mu.Unlock()
	ev.Object = newest
	if ev.Type == event.Update {
		ev.Changed = event.ChangedPaths(ev.OldObject.Object, newest.Object, d.ignore)
		if len(ev.Changed) == 0 && d.traced() {
			d.traceIgnored(key, Change{Type: event.Update, Old: ev.OldObject, Object: newest, Resource: ev.Resource})
		}
		return ev, len(ev.Changed) > 0
	}
	return ev, true
}

// restore puts back a call that failed, before the changes that arrived
// while it ran, so that its retry sees the object's latest state: an add
// stays an add, an update keeps the object the script last saw, and an add
// followed by a delete becomes nothing.
func (d *Core) restore(key objectKey, taken Change) {
	if taken.Type == event.Timer {
		d.retryTimer(key, taken)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	later := d.pending[key]
	e := &entry{resource: taken.Resource}
	if later != nil {
		// The timer is the object's, not the change's: it stays as it is.
		e.timer = later.timer
	}
	if d.every && !key.tick {
		e.every = append(e.every, taken)
		d.queued++
		if later != nil {
			e.every = append(e.every, later.every...)
		}
	} else {
		e.merge(taken, wants{add: true, update: true, delete: true})
		if later != nil {
			for _, c := range later.replay() {
				e.merge(c, d.want)
			}
		}
	}
	if e.empty() {
		delete(d.pending, key)
		return
	}
	d.pending[key] = e
}
