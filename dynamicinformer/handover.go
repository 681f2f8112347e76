package dynamicinformer

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// handover sits between a sharded informer and one Watch's handler, and
// remembers the last state of each object the handler was given. A
// sharded informer restarts at every change of its range (a replica
// joins, leaves, or comes back), and the new informer's initial list
// holds, besides the objects the replica gained, every object it kept.
// Replayed as initial adds, those re-ran every rule on every object of
// the replica at each membership change. With the previous instance's
// handover (prev), the new instance's initial list is sent on as:
//
//   - nothing, for an object the handler was given at the same
//     resourceVersion (same UID): it has seen that state;
//   - an update from the state it was given, for an object that changed
//     while the informers were switched;
//   - an initial add, for an object it was not given (gained, or new).
//
// It records what the handler was given, not what the old informer's
// cache held: client-go drops the notifications still buffered for a
// handler when its informer stops, and those changes must be replayed.
//
// The memory is one map entry per object (the objects are the cache's
// own); prev is let go once the handler has caught up (release).
type handover struct {
	h cache.ResourceEventHandler

	mu   sync.Mutex
	seen map[types.UID]identified
	// prev is what the handler was given by the previous instance; nil
	// once this instance's initial list has been handed over.
	prev map[types.UID]identified
}

var _ cache.ResourceEventHandler = (*handover)(nil)

// identified is what the cache's objects are known by: a handover and
// GetNewer read no more of them.
type identified interface {
	GetUID() types.UID
	GetResourceVersion() string
}

// newHandover wraps h for a new instance; previous is the handover of the
// instance before it, or nil. Its calls must have returned (the instance
// stopped): the new one takes its record over.
func newHandover(h cache.ResourceEventHandler, previous *handover) *handover {
	ho := &handover{h: h, seen: map[types.UID]identified{}}
	if previous != nil {
		previous.mu.Lock()
		ho.prev, previous.seen = previous.seen, nil
		previous.mu.Unlock()
	}
	return ho
}

// OnAdd sends an object of the initial list on, unless the handler has
// seen its state (see the type's doc).
func (ho *handover) OnAdd(obj any, initial bool) {
	u, ok := obj.(identified)
	if !ok {
		ho.h.OnAdd(obj, initial)
		return
	}
	ho.mu.Lock()
	before, had := ho.prev[u.GetUID()]
	if ho.seen != nil {
		ho.seen[u.GetUID()] = u
	}
	ho.mu.Unlock()
	switch {
	case !initial || !had:
		ho.h.OnAdd(obj, initial)
	case before.GetResourceVersion() != u.GetResourceVersion():
		ho.h.OnUpdate(before, obj)
	}
}

// OnUpdate records and sends an update on.
func (ho *handover) OnUpdate(oldObj, newObj any) {
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
	u, ok := obj.(identified)
	if tomb, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
		u, ok = tomb.Obj.(identified)
	}
	if ok {
		ho.mu.Lock()
		delete(ho.seen, u.GetUID())
		ho.mu.Unlock()
	}
	ho.h.OnDelete(obj)
}

// release lets the previous instance's record go, once this instance's
// initial list has been handed over. Objects the handler was given that
// are not in the new list left the range, or were deleted while the
// informers were switched; their deletes are not replayed (as before
// the handover, and as for any restart: see the package doc).
func (ho *handover) release() {
	ho.mu.Lock()
	ho.prev = nil
	ho.mu.Unlock()
}
