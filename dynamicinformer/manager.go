package dynamicinformer

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/projection"
	"github.com/kreact/kreact/shard"
)

// Options tunes a Manager. The zero value is usable.
type Options struct {
	// Logger receives the manager's log lines and those of the informers
	// it runs (client-go's contextual logs are routed to it). nil means
	// slog.Default().
	Logger *slog.Logger
	// ResyncPeriod is how often every handler is re-sent every cached object
	// as an update (same resource version). Zero means never.
	ResyncPeriod time.Duration
	// MaxConcurrentInitialLists caps how many informers may be starting
	// (preflight and initial list) at once. Zero or less means 50.
	MaxConcurrentInitialLists int
	// RetryPeriod is how often a forbidden or failed watch is retried, and
	// the longest back-off between retries after a transient error
	// (unreachable server, 404 while discovery still lists the resource).
	// Granting a missing permission therefore heals a forbidden watch
	// within about this long. Zero means 30s.
	RetryPeriod time.Duration
	// Shards, if set, gives the range of the hash space this replica owns;
	// informers of keys with Sharded set hold only the objects in it, and
	// restart when it changes. Nil means no sharding: Key.Sharded is
	// ignored.
	Shards Shards
	// ShardByNamespace shards namespaced resources by namespace rather
	// than by UID (see package shard). Cluster-scoped resources are always
	// sharded by UID.
	ShardByNamespace bool
	// Metadata, if set, lists and watches the informers whose watches
	// read only metadata (projection.Fields.MetadataOnly): the server
	// then sends objects' metadata only, the cheapest answer to decode.
	// Nil lists and watches them whole, and cuts them down here.
	Metadata metadata.Interface
	// REST, if set, lists and watches the other informers' objects; it
	// must be made by RESTClient, which decodes their JSON straight into
	// the compact form the cache holds, at a fraction of the cost of
	// decoding it into maps first. Nil lists and watches
	// through the dynamic client given to New (the package's unit tests
	// give fakes), and compacts the decoded objects: the cached objects
	// are the same.
	REST rest.Interface
}

// Shards tells which part of the hash space this replica owns; a
// *shard.Membership is one.
type Shards interface {
	// Range returns the owned range, and false while nothing is owned.
	Range() (shard.Range, bool)
	// Subscribe calls fn, which must not block, after every change of
	// Range; the returned function unsubscribes.
	Subscribe(fn func()) (unsubscribe func())
}

const (
	defaultMaxConcurrentInitialLists = 50
	defaultRetryPeriod               = 30 * time.Second
	firstRetryDelay                  = time.Second
)

type runState int

const (
	notRunning runState = iota
	starting            // Run is subscribing; Watch only records entries
	running
	stopped
)

// Manager runs one informer per Key but for the label selector, shared by
// every Watch on that key and stopped when the last of them stops. It starts informers only for
// resources that discovery reports, and stops them when discovery drops
// the resource. See the package documentation.
//
// All methods are safe for concurrent use.
type Manager struct {
	client dynamic.Interface
	src    discovery.Source
	opts   Options
	log    *slog.Logger
	// gate holds one token per informer that is starting.
	gate chan struct{}

	mu      sync.Mutex
	state   runState
	runCtx  context.Context
	entries map[Key]*entry
	loops   sync.WaitGroup
}

// New returns a Manager that lists and watches through client and learns
// which resources exist from src. Nothing starts before Run.
func New(client dynamic.Interface, src discovery.Source, opts Options) *Manager {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.MaxConcurrentInitialLists <= 0 {
		opts.MaxConcurrentInitialLists = defaultMaxConcurrentInitialLists
	}
	if opts.RetryPeriod <= 0 {
		opts.RetryPeriod = defaultRetryPeriod
	}
	if opts.ResyncPeriod < 0 {
		opts.ResyncPeriod = 0
	}
	return &Manager{
		client:  client,
		src:     src,
		opts:    opts,
		log:     opts.Logger.With("component", "dynamicinformer"),
		gate:    make(chan struct{}, opts.MaxConcurrentInitialLists),
		entries: map[Key]*entry{},
	}
}

// Run starts the informers of every Watch made so far and of those made
// later, follows discovery changes, and blocks until ctx ends. It then
// stops every informer, waits until no handler is running any more, and
// returns nil. Run may be called once; a second call returns an error.
func (m *Manager) Run(ctx context.Context) error {
	m.mu.Lock()
	if m.state != notRunning {
		m.mu.Unlock()
		return errors.New("dynamicinformer: Run called more than once")
	}
	m.state = starting
	m.mu.Unlock()

	// Subscribe before any entry reads the snapshot. onDiff ignores diffs
	// until the state is running, which loses nothing: the loops started
	// below read the snapshot, which a source updates before it
	// publishes the diff. Subscribe is called without m.mu in case a
	// source calls fn at once.
	unsubscribe := m.src.Subscribe(m.onDiff)
	defer unsubscribe()
	if m.opts.Shards != nil {
		defer m.opts.Shards.Subscribe(m.onReshard)()
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	m.mu.Lock()
	m.runCtx = runCtx
	m.state = running
	for _, e := range m.entries {
		m.startLoopLocked(e)
	}
	m.mu.Unlock()

	<-runCtx.Done()

	m.mu.Lock()
	m.state = stopped
	m.mu.Unlock()
	// Every entry context derives from runCtx: they are all cancelled.
	m.loops.Wait()
	return nil
}

// startLoopLocked starts e's goroutine, once. m.mu must be held and m
// running.
func (m *Manager) startLoopLocked(e *entry) {
	if e.done != nil {
		return
	}
	e.ctx, e.cancel = context.WithCancel(m.runCtx)
	e.done = make(chan struct{})
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		e.run()
	}()
}

// onDiff wakes the entries whose resource came or went, and every pending
// one (the first diff from a source that had not answered yet may not name
// their resource, but they now have something to say). It runs on the
// discovery source's goroutine and never blocks.
func (m *Manager) onDiff(d discovery.Diff) {
	changed := make(map[schema.GroupVersionResource]bool, len(d.Added)+len(d.Removed))
	for _, r := range d.Added {
		changed[r.GVR] = true
	}
	for _, r := range d.Removed {
		changed[r.GVR] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != running {
		return
	}
	for _, e := range m.entries {
		if changed[e.key.GVR] || e.pending() {
			e.poke()
		}
	}
}

// onReshard wakes the sharded entries, which restart their informers on
// the new range. It runs on the shard source's goroutine and never blocks.
func (m *Manager) onReshard() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state != running {
		return
	}
	for _, e := range m.entries {
		if e.sharded() {
			e.poke()
		}
	}
}

// Watch subscribes h to key's informer, starting it if this is the first
// subscriber (once Run is running and the resource is served). owner names
// the subscriber in logs and Status, e.g. a rule's file name.
//
// The key is normalised first (label selectors in canonical order), and an
// invalid key or a nil handler is an error. If the informer is already
// running, h first receives every cached object that key's label selector
// selects as OnAdd(obj, true).
//
// h's methods are called in order, never concurrently with each other
// (see the package doc); objects passed to them belong to the cache
// and must not be modified. Watch may be called before Run; after Run has
// returned it fails with ErrStopped.
//
// The handler receives whole objects (minus what stripForCache drops);
// see WatchFields for less.
func (m *Manager) Watch(key Key, owner string, h cache.ResourceEventHandler) (*Watch, error) {
	return m.WatchFields(key, owner, h, projection.Fields{})
}

// WatchFields is Watch for a handler that reads only fields (and the
// identity metadata every projection keeps). The informer of key caches
// the union of the fields of its watches, so a handler may be given more
// than it asked for, never less. When a watch needs fields that the
// running informer does not cache, the informer restarts with the wider
// union, and every handler on it receives its objects again as initial
// adds, as after the resource went away and came back (but see below for
// a handler that was on a server-selected informer). A union never
// narrows while the informer runs: the fields of a watch that stops stay
// cached until the informer next restarts.
//
// Watches that differ only in their label selectors share one informer.
// When they all have the same selector, the informer sends it to the
// server, which sends only the objects it selects; when they differ, the
// informer lists and watches every object once and each Watch selects its
// own (selects), with the server's meaning (the API server's watch cache,
// cacher.cacheWatcher.convertToWatchEvent): an object that starts
// matching is an OnAdd, one that matches before and after an OnUpdate,
// one that stops matching an OnDelete of its last matching state; the
// initial list, Watch.HasSynced, Get and List hold only the objects
// the Watch's selector matches. A Watch joining a server-selected
// informer with another selector restarts it without a selector; the
// handlers already on it are handed over (see handover): they receive
// only what changed while the informers were switched, and the deletes
// they would have missed, never an object twice. The informer goes back
// to a server-side selector only when it next restarts (a resource that
// comes back, a wider projection, a new shard range) with Watches that
// all have the same selector again.
func (m *Manager) WatchFields(key Key, owner string, h cache.ResourceEventHandler, fields projection.Fields) (*Watch, error) {
	if h == nil {
		return nil, errors.New("dynamicinformer: nil handler")
	}
	key, err := key.normalize()
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.state == stopped {
		return nil, ErrStopped
	}
	sel, err := labels.Parse(key.LabelSelector)
	if err != nil {
		// normalize parsed it already.
		return nil, fmt.Errorf("watch %s: %w", key, err)
	}
	e := m.entries[key.informerKey()]
	if e == nil {
		e = newEntry(m, key.informerKey())
		m.entries[e.key] = e
	}
	w := &Watch{m: m, e: e, key: key, sel: sel, owner: owner, handler: h, fields: fields}
	if err := e.add(w); err != nil {
		if len(e.watches) == 0 {
			m.removeEntryLocked(e)
		}
		return nil, fmt.Errorf("watch %s: %w", key, err)
	}
	if m.state == running {
		// After add: the loop's first informer caches the fields of the
		// watches it finds, and would find none (whole objects) before.
		m.startLoopLocked(e)
	}
	return w, nil
}

// removeEntryLocked forgets e; its loop, if any, is cancelled by the caller.
func (m *Manager) removeEntryLocked(e *entry) {
	if m.entries[e.key] == e {
		delete(m.entries, e.key)
	}
}

// WatchStatus is one informer's state, for progress displays.
type WatchStatus struct {
	// Key is the informer's: its LabelSelector is what it sends to the
	// server ("" when its Watches select locally, see LabelSelectors).
	Key Key
	// LabelSelectors are the distinct label selectors of the Watches
	// sharing the informer, sorted ("" for a Watch that selects
	// everything).
	LabelSelectors []string
	// Phase is the informer's phase (PhaseSynced once its initial list is
	// in the cache, whether or not every handler has caught up).
	Phase Phase
	// Err is as in State.Err.
	Err error
	// Owners are the owners of the Watches sharing the informer, sorted.
	Owners []string
	// Synced reports whether the informer's initial list is complete.
	Synced bool
	// Objects is how many objects the cache held when last counted; it
	// grows during the initial list.
	Objects int
	// Shard says how a sharded informer is filtered: ShardServer,
	// ShardClient, or ShardNone while this replica owns nothing. "" for
	// keys that are not sharded.
	Shard ShardMode
	// ShardFiltered counts the objects and events of other shards that the
	// informer dropped on its side (client mode; always 0 in server mode,
	// where the API server does not send them).
	ShardFiltered int64
}

// Status returns the state of every informer, sorted by key. It takes no
// lock for long and makes no request: it is cheap enough for a progress
// bar refreshed a few times a second.
func (m *Manager) Status() []WatchStatus {
	m.mu.Lock()
	entries := make([]*entry, 0, len(m.entries))
	for _, e := range m.entries {
		entries = append(entries, e)
	}
	m.mu.Unlock()
	out := make([]WatchStatus, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.status())
	}
	slices.SortFunc(out, func(a, b WatchStatus) int {
		return cmp.Or(
			cmp.Compare(a.Key.GVR.Group, b.Key.GVR.Group),
			cmp.Compare(a.Key.GVR.Resource, b.Key.GVR.Resource),
			cmp.Compare(a.Key.GVR.Version, b.Key.GVR.Version),
			cmp.Compare(a.Key.Namespace, b.Key.Namespace),
			cmp.Compare(a.Key.LabelSelector, b.Key.LabelSelector),
			cmp.Compare(a.Key.FieldSelector, b.Key.FieldSelector),
		)
	})
	return out
}
