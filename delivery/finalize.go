package delivery

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/finalizers"
)

// LongFinalizerWait is how long an object may wait on a rule's finalizer
// before a warning is logged.
const LongFinalizerWait = time.Minute

// finalizeChangeLocked applies spec.finalizer to a change of key: an
// add or update of an object held by the rule's finalizer becomes a
// Finalize delete; changes of an object already finalized are dropped (it
// is on its way out); a live object without the finalizer gets it: the
// returned func, if not nil, sends that patch and must be called once
// d.mu is released. It returns false for a change to drop.
func (d *Core) finalizeChangeLocked(key objectKey, c Change) (Change, bool, func()) {
	uid := c.Object.GetUID()
	if done, ok := d.fin.finalized[key]; ok {
		if done == uid {
			if c.Type == event.Delete {
				delete(d.fin.finalized, key)
			}
			return c, false, nil
		}
		delete(d.fin.finalized, key)
	}
	if c.Type == event.Delete {
		delete(d.fin.waiting, key)
		if finalizers.Terminating(c.Object) || !finalizers.Has(c.Object, d.fin.name) {
			return c, true, nil
		}
		// A live object that leaves the informer with the finalizer left
		// the rule's selector or namespaces: the rule no longer handles it,
		// so it must not hold the object's deletion.
		a := finalizers.Action(d.rule.Name, c.Resource, c.Object, finalizers.RemovePatch(c.Object, d.fin.name))
		return c, true, func() { d.sink.EnqueueResult(a, func(error) {}) }
	}
	if finalizers.Terminating(c.Object) {
		if !finalizers.Has(c.Object, d.fin.name) {
			return c, true, nil
		}
		if _, ok := d.fin.waiting[key]; !ok {
			d.fin.waiting[key] = c.Object.GetDeletionTimestamp().Time
		}
		return Change{Type: event.Delete, Object: c.Object, Resource: c.Resource, Finalize: true}, true, nil
	}
	// The lookup checks presence: an object without a UID (as a rule
	// test may write it) must not count as being added already.
	if adding, ok := d.fin.adding[key]; finalizers.Has(c.Object, d.fin.name) || (ok && adding == uid) {
		return c, true, nil
	}
	d.fin.adding[key] = uid
	a := finalizers.Action(d.rule.Name, c.Resource, c.Object, finalizers.AddPatch(c.Object, d.fin.name))
	// Someone else took the finalizer off a live object (kreact removes
	// it only once the object is deleted, or gone from the rule): say why
	// it comes back, or `kreact finalizers release` against a running
	// kreact would seem to do nothing. A release removes it from many
	// objects at once: the lines are summarised like failures.
	removed := c.Type == event.Update && finalizers.Has(c.Old, d.fin.name)
	// The result only clears the mark, so that an add that failed is
	// tried again with the object's next change.
	return c, true, func() {
		if removed {
			d.failures.failed(slog.LevelWarn, "the rule's finalizer was removed from an object the rule watches; kreact puts it back (to release objects for good, remove the rule from the rule set or stop kreact first)", nil,
				[]any{"resource", c.Resource.GVR.GroupResource().String(), "object", objectName(c.Object), "finalizer", d.fin.name})
		}
		d.sink.EnqueueResult(a, func(error) {
			d.mu.Lock()
			if d.fin.adding[key] == uid {
				delete(d.fin.adding, key)
			}
			d.mu.Unlock()
		})
	}
}

// ownFinalizerOnly reports whether an update changes nothing but the
// rule's own finalizer (kreact adding it): no call for that.
func (d *Core) ownFinalizerOnly(ev event.Event) bool {
	if d.fin == nil || ev.Type != event.Update || !slices.Equal(ev.Changed, []string{"metadata.finalizers"}) {
		return false
	}
	strip := func(u *unstructured.Unstructured) []string {
		return slices.DeleteFunc(slices.Clone(u.GetFinalizers()), func(f string) bool { return f == d.fin.name })
	}
	return slices.Equal(strip(ev.OldObject), strip(ev.Object))
}

// finish completes a Finalize call that succeeded: once its actions
// succeeded, the finalizer is removed from the object's newest state; then
// the object is released and its later changes are dropped. It returns
// the error that makes the finalization fail (and be retried), or nil.
func (d *Core) finish(ctx context.Context, key objectKey, ev event.Event, asked []actions.Action) error {
	if err := d.run(ctx, asked); err != nil {
		return err
	}
	obj := ev.Object
	if d.opts.Cache != nil {
		if cur, ok := d.opts.Cache.Get(key.source, key.namespace, key.name); ok && cur.GetUID() == obj.GetUID() {
			obj = cur
		}
	}
	// Finalized before the finalizer goes: the API server may delete the
	// object, and the informer deliver its DELETED event, before the
	// patch's answer reaches here; that event must find the object
	// finalized, or it would owe onDelete a second time.
	uid := obj.GetUID()
	d.mu.Lock()
	d.fin.finalized[key] = uid
	d.dropFinalizeLocked(key, uid)
	d.mu.Unlock()
	if err := d.removeFinalizer(ctx, key, ev.Resource, obj); err != nil {
		d.mu.Lock()
		if d.fin.finalized[key] == uid {
			delete(d.fin.finalized, key)
		}
		d.mu.Unlock()
		return err
	}
	d.mu.Lock()
	delete(d.fin.waiting, key)
	delete(d.fin.longWaits, key)
	d.mu.Unlock()
	return nil
}

// newerWait is how long removeFinalizer waits for the cache to hold the
// state that refused its patch.
const newerWait = 5 * time.Second

// removeFinalizer removes the rule's finalizer from obj, the newest state
// the cache held, once its onDelete succeeded (finalizers.Remove). The
// patch is guarded by the finalizer's place in the list, so the API
// server refuses it when another client changed the list first: a
// controller removing its own finalizer from the same deleted object at
// the same moment, or onDelete's own actions, whose watch events may not
// have reached the cache yet. onDelete succeeded, and one delete is one
// onDelete: the removal alone is made again, from the state that refused
// it, once the cache holds it. Only when that state does not come (the
// informer is behind by newerWait) does the refusal make the whole
// finalization fail and be retried, onDelete included.
func (d *Core) removeFinalizer(ctx context.Context, key objectKey, res apiresource.Resource, obj *unstructured.Unstructured) error {
	patch := func(obj *unstructured.Unstructured, data []byte) error {
		return d.run(ctx, []actions.Action{finalizers.Action(d.rule.Name, res, obj, data)})
	}
	newer := func(obj *unstructured.Unstructured, refused error) (*unstructured.Unstructured, error) {
		if d.opts.Cache == nil {
			return nil, refused
		}
		newer, gone := d.newerState(ctx, key, obj)
		switch {
		case gone:
			return nil, nil
		case newer == nil:
			return nil, refused
		}
		return newer, nil
	}
	_, err := finalizers.Remove(obj, d.fin.name, patch, newer)
	return err
}

// newerState waits, up to newerWait, for the cache to hold another state of
// obj's incarnation than obj. gone reports that it holds none: the object
// was deleted, so no finalizer is left to remove.
func (d *Core) newerState(ctx context.Context, key objectKey, obj *unstructured.Unstructured) (newer *unstructured.Unstructured, gone bool) {
	deadline := time.Now().Add(newerWait)
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		if cur, ok := d.opts.Cache.Newer(key.source, key.namespace, key.name, obj.GetUID(), obj.GetResourceVersion()); ok {
			return cur, false
		}
		if cur, ok := d.opts.Cache.Get(key.source, key.namespace, key.name); !ok || cur.GetUID() != obj.GetUID() {
			return nil, true
		}
		if time.Now().After(deadline) {
			return nil, false
		}
		select {
		case <-ctx.Done():
			return nil, false
		case <-time.After(wait):
		}
	}
}

// dropFinalizeLocked drops the finalization of uid that waits in key's
// entry: changes of the held object that came while its onDelete ran.
// That onDelete succeeded: one delete is one onDelete.
func (d *Core) dropFinalizeLocked(key objectKey, uid types.UID) {
	e := d.pending[key]
	if e == nil {
		return
	}
	if e.finalize != nil && e.finalize.GetUID() == uid {
		e.finalize = nil
	}
	n := len(e.every)
	e.every = slices.DeleteFunc(e.every, func(c Change) bool { return c.Finalize && c.Object.GetUID() == uid })
	d.queued -= n - len(e.every)
	if e.empty() {
		delete(d.pending, key)
	}
}

// errFinalizeStopped is the error of a finalization cut short by Run's end.
var errFinalizeStopped = errors.New("stopped before the finalizer was removed")

// run executes actions through the sink, in order per target, and waits
// for them: the first error, if any.
func (d *Core) run(ctx context.Context, asked []actions.Action) error {
	if len(asked) == 0 {
		return nil
	}
	results := make(chan error, len(asked))
	for _, a := range asked {
		d.sink.EnqueueResult(a, func(err error) { results <- err })
	}
	var first error
	for range asked {
		select {
		case err := <-results:
			if first == nil {
				first = err
			}
		case <-ctx.Done():
			return errFinalizeStopped
		}
	}
	return first
}

// finalizing is a Core's state of the rule's finalizer, under the
// Core's mu: the objects whose finalization is done (their later
// changes are dropped), whose finalizer is being added, that wait on the
// finalizer (since their deletion), and that have been logged as waiting
// long. A rule without spec.finalizer has none.
type finalizing struct {
	// name is the finalizer, kreact.dev/RULE.
	name      string
	finalized map[objectKey]types.UID
	adding    map[objectKey]types.UID
	waiting   map[objectKey]time.Time
	longWaits map[objectKey]bool
}

func newFinalizing(name string) *finalizing {
	return &finalizing{name: name, finalized: map[objectKey]types.UID{}, adding: map[objectKey]types.UID{},
		waiting: map[objectKey]time.Time{}, longWaits: map[objectKey]bool{}}
}

// since reports whether key waits on the finalizer, and since when; never
// without a finalizer (f nil).
func (f *finalizing) since(key objectKey) (time.Time, bool) {
	if f == nil {
		return time.Time{}, false
	}
	t, ok := f.waiting[key]
	return t, ok
}

// Finalizing returns how many objects wait on the rule's finalizer and
// since when the oldest one does (zero when none).
func (d *Core) Finalizing() (int, time.Time) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fin == nil {
		return 0, time.Time{}
	}
	var oldest time.Time
	for _, since := range d.fin.waiting {
		if oldest.IsZero() || since.Before(oldest) {
			oldest = since
		}
	}
	return len(d.fin.waiting), oldest
}

// warnLongWaits logs, once per object, the objects that have waited on the
// rule's finalizer for more than LongFinalizerWait.
func (d *Core) warnLongWaits() {
	now := d.now()
	type late struct {
		key   objectKey
		since time.Time
	}
	var lates []late
	d.mu.Lock()
	for k, since := range d.fin.waiting {
		if now.Sub(since) > LongFinalizerWait && !d.fin.longWaits[k] {
			d.fin.longWaits[k] = true
			lates = append(lates, late{k, since})
		}
	}
	d.mu.Unlock()
	for _, l := range lates {
		name := l.key.name
		if l.key.namespace != "" {
			name = l.key.namespace + "/" + name
		}
		d.log.Warn("object deleted long ago still waits on kreact's finalizer; if the rule cannot finish it, release it: kreact finalizers release "+d.rule.Name+" RESOURCE",
			"object", name, "finalizer", d.fin.name, "waiting", now.Sub(l.since).Round(time.Second).String())
	}
}

// watchFinalizers runs warnLongWaits every LongFinalizerWait/2 until ctx
// ends.
func (d *Core) watchFinalizers(ctx context.Context) {
	t := d.clock.NewTicker(LongFinalizerWait / 2)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C():
			d.warnLongWaits()
		}
	}
}
