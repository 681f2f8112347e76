package dynamicinformer

import (
	"cmp"
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/projection"
)

// Watch is one subscriber's handle on a shared informer, returned by
// Manager.Watch. Its methods are safe for concurrent use.
type Watch struct {
	m   *Manager
	e   *entry
	key Key
	// sel is key.LabelSelector parsed: what selects (see selects) reads.
	sel     labels.Selector
	owner   string
	handler cache.ResourceEventHandler
	// fields is what the handler reads; the zero value is whole objects.
	fields projection.Fields

	// Guarded by e.mu. inst and reg are the instance the handler was last
	// registered with; they outlive the instance so that Stop can wait for
	// the handler to return even while the instance is being stopped.
	stopped bool
	inst    *instance
	reg     cache.ResourceEventHandlerRegistration
	// ho is the handover registered in the handler's place on the
	// instance of a sharded key or of one with a server-side label
	// selector, or that took over the record of such an instance; nil
	// for others.
	ho *handover
}

// registeredHandler returns what to register on inst, a new instance:
// w's handler, behind a handover when inst is sharded or selects on the
// server (it may restart under the handler: see handover) or when w's
// previous instance kept a record for it, and behind w's label selector
// when it has one that the server does not apply. Objects reach the
// handler decoded (expander). The handover of a key that is not sharded
// takes the previous instance's record over only when carry is set (a
// restart for another selector or more fields): after any other restart
// (the resource gone and back, permissions lost and regained) the new
// initial list is handed out whole and synthesises no delete, as the
// package doc says. Called under w.e.mu.
func (w *Watch) registeredHandler(inst *instance, sharded, carry bool) cache.ResourceEventHandler {
	h := cache.ResourceEventHandler(newExpander(w.handler))
	prev := w.ho
	if !sharded && !carry {
		prev = nil
	}
	record := sharded || inst.labelSelector != ""
	if record || (prev != nil && prev.recording()) {
		// A Watch that had its initial list, on an informer that is not
		// sharded, is resumed: what the new list holds that it was not
		// given is no initial add (see handover).
		resumed := !sharded && w.reg != nil && w.reg.HasSynced()
		w.ho = newHandover(h, prev, record, !sharded, resumed)
		h = w.ho
	} else {
		w.ho = nil
	}
	if !w.sel.Empty() && inst.labelSelector != w.key.LabelSelector {
		// The informer holds objects w does not select. When the server
		// selects with w's own selector, every event (its deletes of
		// objects that stopped matching carry their last matching state,
		// as do a relist's) is one w selects: no test per event.
		h = cache.FilteringResourceEventHandler{FilterFunc: w.selects, Handler: h}
	}
	return h
}

// selects reports whether w's label selector selects obj, a cached object.
func (w *Watch) selects(obj any) bool { return selects(w.sel, obj) }

// Key returns the watch's key, normalised.
func (w *Watch) Key() Key { return w.key }

// Owner returns the owner given to Manager.Watch.
func (w *Watch) Owner() string { return w.owner }

// HasSynced reports whether this watch's handler has received the whole
// initial list of the running informer (the registration's HasSynced, not
// the informer's). It is false while the watch is pending, forbidden,
// failed or stopped, and becomes false again when the resource goes away.
func (w *Watch) HasSynced() bool {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	return w.syncedLocked()
}

func (w *Watch) syncedLocked() bool {
	return !w.stopped && w.inst != nil && w.inst == w.e.inst && w.reg.HasSynced()
}

// State returns the watch's phase: the informer's, except that it is
// PhaseStarting until this handler has caught up, and PhaseStopped once
// Stop was called or the manager has stopped.
func (w *Watch) State() State {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	switch {
	case w.stopped:
		return State{Phase: PhaseStopped}
	case w.e.phase == PhaseSynced && !w.syncedLocked():
		return State{Phase: PhaseStarting}
	}
	return State{Phase: w.e.phase, Err: w.e.err}
}

// Stop unsubscribes the handler and returns once it is not running and
// will not be called again. When the last Watch on a key stops, its
// informer stops (and Stop waits for that too). Stop is idempotent.
//
// Stop must not be called from inside this watch's own handler: it waits
// for that handler to return and would deadlock (client-go's
// cache.ShutDownEventHandler has the same rule). Handlers that want to
// unsubscribe themselves should hand the Stop to another goroutine.
func (w *Watch) Stop() {
	m, e := w.m, w.e
	m.mu.Lock()
	e.mu.Lock()
	if w.stopped {
		e.mu.Unlock()
		m.mu.Unlock()
		return
	}
	w.stopped = true
	delete(e.watches, w)
	inst, reg, ho := w.inst, w.reg, w.ho
	if inst != nil && e.inst == inst {
		// Nothing else reads it, but keep inst free of stale entries.
		w.inst = nil
	}
	last := len(e.watches) == 0
	if last {
		m.removeEntryLocked(e)
	}
	cancel, done := e.cancel, e.done
	e.mu.Unlock()
	m.mu.Unlock()

	if reg != nil {
		// Errors only for foreign handles; ours are always from inst.
		_ = cache.ShutDownEventHandler(inst.informer, reg)
	}
	if ho != nil {
		ho.close()
	}
	if last && cancel != nil {
		cancel()
		<-done
	}
}

// indexer returns the running informer's cache.
func (w *Watch) indexer() (cache.Indexer, error) {
	w.e.mu.Lock()
	defer w.e.mu.Unlock()
	switch {
	case w.stopped:
		return nil, fmt.Errorf("watch %s: %w: stopped", w.key, ErrNoCache)
	case w.e.inst == nil:
		return nil, fmt.Errorf("watch %s: %w: %s", w.key, ErrNoCache, w.e.phase)
	case !w.e.inst.serves(w):
		// Its informer restarts without a server-side label selector.
		return nil, fmt.Errorf("watch %s: %w: %s", w.key, ErrNoCache, PhaseStarting)
	}
	return w.e.inst.informer.GetIndexer(), nil
}

// Get returns the cached object namespace/name (namespace "" for
// cluster-scoped resources) and whether it exists and w's label selector
// selects it. The error wraps
// ErrNoCache when no informer is running. Before HasSynced the cache may be
// incomplete. The object is decoded from the cache's compact form at each
// call: its maps are the caller's, its strings share the cache's memory.
func (w *Watch) Get(namespace, name string) (*unstructured.Unstructured, bool, error) {
	cached, k, err := w.lookup(namespace, name)
	if cached == nil || err != nil {
		return nil, false, err
	}
	return w.decoded(k, cached)
}

// GetNewer is Get for an object of incarnation uid at another
// resourceVersion than rv: found is false when the cache holds that state,
// another incarnation or nothing, and then nothing is decoded.
func (w *Watch) GetNewer(namespace, name string, uid types.UID, rv string) (obj *unstructured.Unstructured, found bool, err error) {
	cached, k, err := w.lookup(namespace, name)
	if cached == nil || err != nil {
		return nil, false, err
	}
	if m, ok := cached.(identified); !ok || m.GetUID() != uid || m.GetResourceVersion() == rv {
		return nil, false, nil
	}
	return w.decoded(k, cached)
}

// lookup returns the cached form of namespace/name, nil if there is none
// or w does not select it, and its key.
func (w *Watch) lookup(namespace, name string) (any, string, error) {
	idx, err := w.indexer()
	if err != nil {
		return nil, "", err
	}
	k := name
	if namespace != "" {
		k = namespace + "/" + name
	}
	obj, ok, err := idx.GetByKey(k)
	if err != nil || !ok || !w.selects(obj) {
		return nil, k, err
	}
	return obj, k, nil
}

func (w *Watch) decoded(k string, cached any) (*unstructured.Unstructured, bool, error) {
	u, ok := expand(cached).(*unstructured.Unstructured)
	if !ok {
		return nil, false, fmt.Errorf("watch %s: cached %s is a %T", w.key, k, cached)
	}
	return u, true, nil
}

// List returns the cached objects in namespace ("" for all) that match sel
// (nil for all) and that w's label selector selects, sorted by namespace and name. The error wraps ErrNoCache
// when no informer is running. Each object is decoded, as by Get.
func (w *Watch) List(namespace string, sel labels.Selector) ([]*unstructured.Unstructured, error) {
	idx, err := w.indexer()
	if err != nil {
		return nil, err
	}
	if sel == nil {
		sel = labels.Everything()
	}
	var out []*unstructured.Unstructured
	add := func(o any) {
		// The labels are matched here, on the decoded object: client-go's
		// ListAll would decode each object once more to read them.
		if !w.selects(o) {
			return
		}
		if u, ok := expand(o).(*unstructured.Unstructured); ok && sel.Matches(labels.Set(u.GetLabels())) {
			out = append(out, u)
		}
	}
	switch {
	case namespace == "" || namespace == w.key.Namespace:
		// A namespaced informer's cache holds its namespace only, and
		// has no index (see indexers).
		err = cache.ListAll(idx, labels.Everything(), add)
	case w.key.Namespace != "":
		// Another namespace than the informer's: none of its objects.
	default:
		err = cache.ListAllByNamespace(idx, namespace, labels.Everything(), add)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(out, func(a, b *unstructured.Unstructured) int {
		return cmp.Or(cmp.Compare(a.GetNamespace(), b.GetNamespace()), cmp.Compare(a.GetName(), b.GetName()))
	})
	return out, nil
}
