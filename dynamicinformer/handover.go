package dynamicinformer

import (
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// handover sits between an informer that may restart under its Watches
// and one Watch's handler (after its label selector, see
// Watch.registeredHandler), and remembers the last state of each object
// the handler was given. A sharded informer restarts at every change of
// its range (a replica joins, leaves, or comes back), and the new
// informer's initial list holds, besides the objects the replica gained,
// every object it kept. Replayed as initial adds, those re-ran every rule
// on every object of the replica at each membership change. An informer
// with a server-side label selector restarts without one when a Watch
// with another selector joins it, and its Watches must neither lose nor
// repeat an event. With the previous instance's handover (prev), the new
// instance's initial list is sent on as:
//
//   - nothing, for an object the handler was given at the same
//     resourceVersion (same UID): it has seen that state;
//   - an update from the state it was given, for an object that changed
//     while the informers were switched;
//   - an add for an object it was not given (gained, or new): an initial
//     add, but for a Watch that had received the previous instance's
//     whole initial list on an informer that is not sharded (resumed):
//     the object was created, or came to match, while the informers
//     were switched, which is no initial list of the rule's (ctx.initial).
//
// It records what the handler was given, not what the old informer's
// cache held: client-go drops the notifications still buffered for a
// handler when its informer stops, and those changes must be replayed.
//
// The memory is one map entry per object (the objects are the cache's
// own), for the Watches of sharded informers and of informers with a
// server-side label selector; prev is let go once the handler has caught
// up (release).
type handover struct {
	h cache.ResourceEventHandler
	// deletes says that release sends the deletes the handler missed: set
	// for informers that are not sharded, whose new instance holds every
	// object the old one held (see release).
	deletes bool
	// resumed says that the handler had received the previous instance's
	// whole initial list: what it was not given is new to it, not part
	// of an initial list.
	resumed bool

	// calls serialises the calls of h: the informer's, and release's.
	calls sync.Mutex
	// closed is set under calls when the Watch stops: release calls h no
	// more.
	closed bool

	mu sync.Mutex
	// seen is what the handler was given, nil when this instance keeps
	// no record (see newHandover).
	seen map[types.UID]identified
	// prev is what the handler was given by the previous instance; nil
	// once this instance's initial list has been handed over.
	prev map[types.UID]identified
}

var _ cache.ResourceEventHandler = (*handover)(nil)

// identified is what the cache's objects are known by: a handover and
// GetNewer read no more of them.
type identified interface {
	GetNamespace() string
	GetName() string
	GetUID() types.UID
	GetResourceVersion() string
}

// newHandover wraps h for a new instance; previous is the handover of the
// instance before it, or nil. Its calls must have returned (the instance
// stopped): the new one takes its record over. record says whether the
// new one keeps a record for the instance after it; deletes is as in the
// type; resumed, that h had received previous's instance's whole initial
// list.
func newHandover(h cache.ResourceEventHandler, previous *handover, record, deletes, resumed bool) *handover {
	ho := &handover{h: h, deletes: deletes, resumed: resumed && previous != nil}
	if record {
		ho.seen = map[types.UID]identified{}
	}
	if previous != nil {
		previous.mu.Lock()
		ho.prev, previous.seen = previous.seen, nil
		previous.mu.Unlock()
	}
	return ho
}

// OnAdd sends an object of the initial list on, unless the handler has
// seen its state (see the type's doc). An object added later that the
// handler was given by the previous instance left the informer's view and
// came back while the informers were switched: it is sent on as the
// delete and the add the handler missed.
func (ho *handover) OnAdd(obj any, initial bool) {
	ho.calls.Lock()
	defer ho.calls.Unlock()
	u, ok := obj.(identified)
	if !ok {
		ho.h.OnAdd(obj, initial)
		return
	}
	ho.mu.Lock()
	before, had := ho.prev[u.GetUID()]
	delete(ho.prev, u.GetUID())
	if ho.seen != nil {
		ho.seen[u.GetUID()] = u
	}
	ho.mu.Unlock()
	switch {
	case !had:
		ho.h.OnAdd(obj, initial && !ho.resumed)
	case !initial && !ho.deletes:
		// Sharded: it came back into the range; it was never deleted.
		ho.h.OnAdd(obj, initial)
	case !initial:
		ho.h.OnDelete(before)
		ho.h.OnAdd(obj, initial)
	case before.GetResourceVersion() != u.GetResourceVersion():
		ho.h.OnUpdate(before, obj)
	}
}

// OnUpdate records and sends an update on.
func (ho *handover) OnUpdate(oldObj, newObj any) {
	ho.calls.Lock()
	defer ho.calls.Unlock()
	if u, ok := newObj.(identified); ok {
		ho.mu.Lock()
		if ho.seen != nil {
			ho.seen[u.GetUID()] = u
		}
		ho.mu.Unlock()
	}
	ho.h.OnUpdate(oldObj, newObj)
}

// OnDelete forgets and sends a delete on.
func (ho *handover) OnDelete(obj any) {
	ho.calls.Lock()
	defer ho.calls.Unlock()
	u, ok := obj.(identified)
	if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		u, ok = tomb.Obj.(identified)
	}
	if ok {
		ho.mu.Lock()
		delete(ho.seen, u.GetUID())
		delete(ho.prev, u.GetUID())
		ho.mu.Unlock()
	}
	ho.h.OnDelete(obj)
}

// recording reports whether ho keeps a record for the instance after its
// own.
func (ho *handover) recording() bool {
	ho.mu.Lock()
	defer ho.mu.Unlock()
	return ho.seen != nil
}

// handingOver reports whether the previous instance's record is still
// held (release has not run).
func (ho *handover) handingOver() bool {
	ho.mu.Lock()
	defer ho.mu.Unlock()
	return ho.prev != nil
}

// release lets the previous instance's record go, once this instance's
// initial list has been handed over. What is left of it are the objects
// the handler was given that were not in the new list as it selects it.
// For a sharded informer they left the range, or were deleted while the
// informers were switched; their deletes are not replayed (as before
// the handover, and as for any restart: see the package doc). For the
// others (deletes), the new instance holds every object the old one did,
// so each was deleted, or no longer matches sel: the handler is sent the
// delete of the state it was given, as the server's selector would have
// sent it, unless current (the new instance's cache) holds another
// object of that name that sel selects: that one the handler was given
// as an add, and a delete now would read as its own.
func (ho *handover) release(current func(namespace, name string) (any, bool), sel labels.Selector) {
	ho.mu.Lock()
	left := ho.prev
	ho.prev = nil
	ho.mu.Unlock()
	if !ho.deletes || len(left) == 0 {
		return
	}
	// Under calls, the cache read and the deletes are ordered with the
	// informer's calls: an object cached after the read is sent after
	// the deletes.
	ho.calls.Lock()
	defer ho.calls.Unlock()
	if ho.closed {
		return
	}
	for _, old := range left {
		cur, ok := current(old.GetNamespace(), old.GetName())
		if c, isID := cur.(identified); ok && isID && c.GetUID() != old.GetUID() && selects(sel, cur) {
			continue
		}
		ho.h.OnDelete(old)
	}
}

// close makes release call the handler no more; it waits for a call in
// progress.
func (ho *handover) close() {
	ho.calls.Lock()
	ho.closed = true
	ho.calls.Unlock()
}
