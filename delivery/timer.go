package delivery

import (
	"cmp"
	"log/slog"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// timer is an object's pending kreact.after: one per object and rule. A
// call that asks for a timer replaces the pending one (the latest wins),
// so that a script can move a deadline either way; a call that asks for
// none leaves it. Timers live in memory only: a rule that starts gets every
// object as an initial add, and re-arms its timers there.
type timer struct {
	// at is when onTimer is due; zero for no timer.
	at time.Time
	// owed is a timer call that is due whatever the clock says: one that
	// failed and waits for its retry.
	owed bool
	// obj is the object's latest state while a timer is set.
	obj *unstructured.Unstructured
}

func (t *timer) set() bool { return t.owed || !t.at.IsZero() }

func (t *timer) due(now time.Time) bool {
	return t.owed || (!t.at.IsZero() && !now.Before(t.at))
}

// note follows the object while a timer is set: its latest state, and
// its deletion, which drops the timer.
func (t *timer) note(c Change) {
	if !t.set() {
		return
	}
	switch c.Type {
	case event.Add, event.Update:
		t.obj = c.Object
	case event.Delete:
		*t = timer{}
	}
}

// take removes a due timer and returns its call.
func (t *timer) take(res apiresource.Resource) (event.Event, Change) {
	obj := t.obj
	*t = timer{}
	c := Change{Type: event.Timer, Object: obj, Resource: res}
	return event.Event{Type: event.Timer, Object: obj, Resource: res}, c
}

// MinTimerDelay is the shortest delay of a timer: a kreact.after of less
// (0, or a time in the past) fires this long after the call, so that a
// script that re-arms its timer at once cannot keep a worker spinning.
const MinTimerDelay = time.Second

// now is the Core's clock.
func (d *Core) now() time.Time { return d.clock.Now() }

// arm sets the timer a successful call ev of key asked for, on the object
// the call was made with. A timer for an object that is gone from the
// cache by now, or replaced by a new incarnation, is not armed: its delete
// has dropped, or will drop, what the timer was about.
func (d *Core) arm(key objectKey, ev event.Event, req *event.TimerRequest) {
	obj := ev.Object
	if req == nil || key.tick || obj == nil || !d.alive(key, obj) {
		return
	}
	d.mu.Lock()
	e := d.pending[key]
	if e == nil {
		e = &entry{resource: ev.Resource}
		d.pending[key] = e
	}
	delay := max(req.Delay, MinTimerDelay)
	at := d.now().Add(delay)
	if e.timer.obj == nil || !e.timer.set() {
		e.timer.obj = obj
	}
	e.timer.at, e.timer.owed = at, false
	d.mu.Unlock()
	d.queue.AddAfter(key, delay)
}

// alive reports whether the cache still holds obj's incarnation; true
// without a cache.
func (d *Core) alive(key objectKey, obj *unstructured.Unstructured) bool {
	if d.opts.Cache == nil {
		return true
	}
	cur, ok := d.opts.Cache.Get(key.source, key.namespace, key.name)
	return ok && cur.GetUID() == obj.GetUID()
}

// retryTimer puts back a timer call that failed, due at once (the
// workqueue's backoff spaces the retries), unless the object is gone.
func (d *Core) retryTimer(key objectKey, taken Change) {
	if !d.alive(key, taken.Object) {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	e := d.pending[key]
	if e == nil {
		e = &entry{resource: taken.Resource}
		d.pending[key] = e
	}
	if !e.timer.set() {
		e.timer.obj = taken.Object
	}
	e.timer.owed = true
}

// scheduleTickLocked makes the scheduled tick (spec.every) owed when it is
// due, sets the next one, and asks the workqueue to wake the tick key
// then.
//
// The wake-up is asked for each time the tick key is taken, due or not:
// the workqueue keeps one delayed entry per key, at the earliest time it
// was asked for, so the backoff of a failed tick's retry (AddRateLimited)
// replaces the wake-up of the next tick. Without asking again when the
// retry is taken, a tick given up, or retried with success, was the
// schedule's last.
func (d *Core) scheduleTickLocked(now time.Time) {
	if d.nextTick.IsZero() {
		return
	}
	if !now.Before(d.nextTick) {
		e := d.pending[tickKey]
		if e == nil {
			e = &entry{}
			d.pending[tickKey] = e
		}
		e.kind = event.Tick
		d.nextTick = d.ticks.next(d.nextTick, now)
	}
	d.queue.AddAfter(tickKey, d.nextTick.Sub(now))
}

// Fire queues every call that is due by the Core's clock: timers, in
// the order of their deadlines, then the scheduled tick. The workqueue
// does the same by itself as time passes; Fire is for a clock that is
// moved by steps (offline tests, Options.Clock), after which the calls are
// made by Drain.
func (d *Core) Fire() {
	now := d.now()
	type due struct {
		key objectKey
		at  time.Time
	}
	var keys []due
	d.mu.Lock()
	for k, e := range d.pending {
		if !k.tick && e.timer.due(now) {
			keys = append(keys, due{k, e.timer.at})
		}
	}
	tick := !d.nextTick.IsZero() && !now.Before(d.nextTick)
	d.mu.Unlock()
	slices.SortFunc(keys, func(a, b due) int {
		return cmp.Or(a.at.Compare(b.at), cmp.Compare(a.key.source, b.key.source),
			cmp.Compare(a.key.namespace, b.key.namespace), cmp.Compare(a.key.name, b.key.name))
	})
	for _, k := range keys {
		d.queue.Add(k.key)
	}
	if tick {
		d.queue.Add(tickKey)
	}
}

// NextDue returns when the next timer or scheduled tick is due, and false
// when none is set.
func (d *Core) NextDue() (time.Time, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	next := d.nextTick
	for k, e := range d.pending {
		if k.tick || !e.timer.set() {
			continue
		}
		at := e.timer.at
		if e.timer.owed {
			at = d.now()
		}
		if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// Timers returns how many objects have a timer set.
func (d *Core) Timers() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := 0
	for k, e := range d.pending {
		if !k.tick && e.timer.set() {
			n++
		}
	}
	return n
}

// ticks computes when a rule's onTick is due.
type ticks interface {
	// next returns the first tick after now, given the previous one.
	next(prev, now time.Time) time.Time
}

// every ticks at a fixed period, aligned on the first tick: ticks missed
// (a call that ran long, a clock that jumped) are merged into one.
type every time.Duration

func (p every) next(prev, now time.Time) time.Time {
	d := time.Duration(p)
	if prev.IsZero() || prev.After(now) {
		return now.Add(d)
	}
	return prev.Add((now.Sub(prev)/d + 1) * d)
}

// calendar ticks on a spec.schedule.
type calendar struct{ rules.Schedule }

func (c calendar) next(_, now time.Time) time.Time { return c.Next(now) }

// tickSchedule returns the ticks of a rule with spec.every or
// spec.schedule.
func tickSchedule(r *rules.Rule, log *slog.Logger) ticks {
	if r.Every > 0 {
		return every(r.Every)
	}
	s, err := rules.ParseSchedule(r.Schedule, r.TimeZone)
	if err != nil {
		// Loading the rule checked it; only a zone removed from the
		// system since could fail.
		log.Error("spec.schedule: onTick will not be called", "schedule", r.Schedule, "error", err)
		return nil
	}
	return calendar{s}
}
