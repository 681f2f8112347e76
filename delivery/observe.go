package delivery

import (
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// What comes into a Core: the informers' changes (Handler, Observe),
// folded into the work waiting for their object (change.go) and queued,
// and the ticks (Tick). Nothing here waits for a script.

// Handler returns the informer handler of source, the index in the plan
// of the informer it is registered on. It only folds changes in and
// queues objects.
func (d *Core) Handler(source int, res apiresource.Resource) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				d.Observe(source, Change{Type: event.Add, Object: u, Initial: initial, Resource: res})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if ok1 && ok2 {
				d.Observe(source, Change{Type: event.Update, Object: n, Old: o, Resource: res})
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				d.Observe(source, Change{Type: event.Delete, Object: u, Resource: res})
			}
		},
	}
}

// Observe folds a change of an object seen through informer source into
// the work waiting for it, and queues the object. It never blocks on
// scripts.
func (d *Core) Observe(source int, c Change) {
	if obs := d.opts.Observer; obs != nil && d.want.has(c.Type) {
		obs.Event(d.rule.Name, c.Resource.GVR.GroupResource().String(), c.Type)
	}
	if d.once.count.Load() > 0 {
		// Every change, those no handler wants included, may show a
		// marker.
		d.mu.Lock()
		d.forgetMarkLocked(objectKey{source: source, namespace: c.Object.GetNamespace(), name: c.Object.GetName()}, c)
		d.mu.Unlock()
	}
	if !d.wanted(c.Type) {
		if d.traced() {
			d.traceChange(objectKey{source: source, namespace: c.Object.GetNamespace(), name: c.Object.GetName()}, c, NotHandled, d.unhandled[c.Type])
		}
		return
	}
	key := objectKey{source: source, namespace: c.Object.GetNamespace(), name: c.Object.GetName()}
	d.mu.Lock()
	if d.fin != nil {
		var keep bool
		var addFinalizer func()
		c, keep, addFinalizer = d.finalizeChangeLocked(key, c)
		if addFinalizer != nil {
			defer addFinalizer() // after d.mu is released
		}
		if !keep {
			d.mu.Unlock()
			if d.traced() {
				d.traceChange(key, c, Dropped, "the rule has finalized this object, which is on its way out")
			}
			return
		}
	}
	if d.seenAheadLocked(key, c) {
		d.mu.Unlock()
		if d.traced() {
			d.traceChange(key, c, Seen, "a call already had this state, read from the cache")
		}
		return
	}
	if source >= len(d.sources) {
		d.sources = append(d.sources, make([]schema.GroupResource, source+1-len(d.sources))...)
	}
	if d.sources[source].Resource == "" {
		d.sources[source] = c.Resource.GVR.GroupResource()
	}
	e, isNew := d.pending[key], false
	if e == nil {
		e, isNew = d.newEntryLocked(c.Resource), true
	}
	had := e.hasChange()
	e.timer.note(c)
	switch {
	case d.every && !d.want.has(c.Type):
		// Seen only for the timer.
	case d.every:
		if d.queued >= rules.MaxQueuedChanges {
			d.droppedLocked()
			d.mu.Unlock()
			if d.traced() {
				d.traceChange(key, c, Dropped, "the rule's queue is full (delivery: every)")
			}
			return
		}
		e.every = append(e.every, c)
		d.queued++
	default:
		e.merge(c, d.want)
	}
	if d.traced() {
		d.traceObserved(key, c, had, e)
	}
	queue := e.hasChange()
	switch {
	case !e.empty():
		d.pending[key] = e
	case isNew:
		d.spareLocked(e)
	default:
		delete(d.pending, key)
	}
	d.mu.Unlock()
	if queue {
		d.queue.Add(key)
	}
}

// seenAheadLocked reports whether a call has already been given this
// change's state, or a newer one, by freshen.
func (d *Core) seenAheadLocked(key objectKey, c Change) bool {
	ahead, ok := d.ahead[key]
	if !ok {
		return false
	}
	rv, parsed := resourceVersion(c.Object)
	if c.Type == event.Delete || !parsed || rv >= ahead {
		delete(d.ahead, key)
		return c.Type != event.Delete && parsed && rv == ahead
	}
	return true
}

// resourceVersion reads an object's resourceVersion as a number. The API
// calls it opaque; etcd's are increasing integers, and anything else
// (false) is simply not compared.
func resourceVersion(u *unstructured.Unstructured) (uint64, bool) {
	v, err := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
	return v, err == nil
}

// wanted reports whether a change of type t can lead to a call. With
// delivery "latest", updates count for a rule with onAdd only (they
// refresh a pending add) and deletes for any rule (they cancel one).
func (d *Core) wanted(t event.Type) bool {
	if d.fin != nil {
		// Every object gets the finalizer, and every delete is owed.
		return true
	}
	if d.want.timer && (t == event.Update || t == event.Delete) {
		// A timer follows its object's state, and ends with it.
		return true
	}
	if d.every {
		return d.want.has(t)
	}
	switch t {
	case event.Add:
		return d.want.add
	case event.Update:
		return d.want.update || d.want.add
	case event.Delete:
		return d.want.delete || d.want.add || d.want.update
	}
	return false
}

// dropLogEvery rate-limits the log line about dropped changes.
const dropLogEvery = 10 * time.Second

// droppedLocked counts a change dropped from a full "every" queue and
// logs, at most every dropLogEvery, how many were.
func (d *Core) droppedLocked() {
	d.dropped++
	if obs := d.opts.Observer; obs != nil {
		obs.ChangesDropped(d.rule.Name, 1)
	}
	if now := time.Now(); now.Sub(d.lastDropLog) >= dropLogEvery {
		d.log.Error("changes dropped: the rule's queue is full (delivery: every)", "dropped", d.dropped, "limit", rules.MaxQueuedChanges)
		d.dropped, d.lastDropLog = 0, now
	}
}

// Tick queues a call of onTick now, if the rule has spec.every or
// spec.schedule and the handler; ticks that wait are merged into one.
func (d *Core) Tick() {
	if !d.tick {
		return
	}
	if obs := d.opts.Observer; obs != nil {
		obs.Event(d.rule.Name, "", event.Tick)
	}
	d.mu.Lock()
	e := d.pending[tickKey]
	if e == nil {
		e = &entry{}
		d.pending[tickKey] = e
	}
	e.kind = event.Tick
	d.mu.Unlock()
	d.queue.Add(tickKey)
}

// Len returns how many objects (and ticks) have changes waiting; timers
// that are not due do not count.
func (d *Core) Len() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	n := 0
	for _, e := range d.pending {
		if e.hasCall(now) {
			n++
		}
	}
	return n
}
