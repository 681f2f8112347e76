package delivery

import (
	"sync/atomic"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/event"
)

// kreact.once: a call that asks for it carries the patch that marks its
// object (event.Outcome.Once). The marker goes out after every other
// action of the call has succeeded, so that a crash, or a failed action,
// before it leaves the object unmarked and the next call does the work
// again: at least once. An object stays busy until its marker is written,
// so its next call comes after; until the informer has seen the marker,
// that call gets the object with the marker added (withMarker), so that
// kreact.once does not return true twice here for a cache that lags.

// onceMarks is the state of kreact.once in a Core: the objects whose
// marker this process wrote and the cache has not shown yet, by UID.
type onceMarks struct {
	marked map[objectKey]types.UID // guarded by Core.mu
	count  atomic.Int64            // len(marked), read without the lock
}

// forgetMarkLocked drops the mark of key once a change shows the marker, or
// is about another object (deleted, or created again).
func (d *Core) forgetMarkLocked(key objectKey, c Change) {
	uid, ok := d.once.marked[key]
	if ok && (c.Type == event.Delete || c.Object.GetUID() != uid || event.Marked(c.Object, d.rule.Name)) {
		delete(d.once.marked, key)
		d.once.count.Add(-1)
	}
}

// withMarker returns ev with the rule's marker added to (a copy of) its
// object when this process wrote it and the cache does not show it yet.
func (d *Core) withMarker(key objectKey, ev event.Event) event.Event {
	if d.once.count.Load() == 0 || ev.Object == nil {
		return ev
	}
	d.mu.Lock()
	uid, ok := d.once.marked[key]
	d.mu.Unlock()
	if !ok || uid != ev.Object.GetUID() || event.Marked(ev.Object, d.rule.Name) {
		return ev
	}
	obj := ev.Object.DeepCopy()
	annotations := obj.GetAnnotations()
	if annotations == nil {
		annotations = map[string]string{}
	}
	annotations[event.OnceAnnotation(d.rule.Name)] = ""
	obj.SetAnnotations(annotations)
	ev.Object = obj
	return ev
}

// markedOnce records that the marker of a call on key, whose object has
// uid, is written: the object's later calls see kreact.once false even
// before the cache shows the marker.
func (d *Core) markedOnce(key objectKey, uid types.UID) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.once.marked[key]; !ok {
		d.once.count.Add(1)
	}
	d.once.marked[key] = uid
}
