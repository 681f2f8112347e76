package discovery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/metadata"
)

// Options configures a Cache. The zero value is usable.
type Options struct {
	// Metadata is used by Run to watch CustomResourceDefinitions and
	// APIServices, so that a change to either triggers a refresh. Nil means
	// no watches: new APIs are then seen only by the poll and RequestRefresh.
	Metadata metadata.Interface
	// Debounce is how long Run waits after the last CRD or APIService change
	// before it rediscovers, so that a burst of changes (a chart installing
	// twenty CRDs) costs one request. A steady stream of changes delays a
	// refresh by at most ten times Debounce. Run also refreshes once more
	// two Debounce periods after a triggered refresh, because the API
	// server's discovery lags a CRD's Established condition. Zero means 1s.
	Debounce time.Duration
	// PollInterval is how often Run rediscovers without any trigger, the
	// safety net for missed events. Zero means 5m.
	PollInterval time.Duration
	// MinRefreshInterval is the least time between the previous refresh and
	// one asked for by RequestRefresh, so that a burst of requests (a typo
	// in many rules) costs at most one request per interval. Zero means 5s.
	MinRefreshInterval time.Duration
	// Logger receives warnings (a failed refresh, an aggregated API that is
	// down, a watch that fails) and debug messages. Nil means discard.
	Logger *slog.Logger
}

// Cache holds the server's listable, watchable resources in memory and
// publishes what changes. Create it with New; it is safe for concurrent use.
type Cache struct {
	client             cgdiscovery.DiscoveryInterface
	metadata           metadata.Interface
	debounce           time.Duration
	pollInterval       time.Duration
	minRefreshInterval time.Duration
	log                *slog.Logger

	// refreshMu serializes refreshes, so snapshots are published in the
	// order they were discovered. It guards failedKey.
	refreshMu sync.Mutex
	failedKey string // the failed group versions last warned about

	mu          sync.Mutex
	snap        *Snapshot
	synced      bool
	lastRefresh time.Time
	seen        observed
	subs        map[*subscriber]struct{}
	gone        map[schema.GroupResource]time.Time // deleted CRDs → until when to chase them

	triggers chan struct{}
	requests chan struct{}
	running  atomic.Bool
}

var _ Source = (*Cache)(nil)

// New returns a Cache that discovers through client. Nothing is fetched
// until Refresh or Run is called; until then Snapshot is empty.
//
// client may be a plain *discovery.DiscoveryClient (preferred: the Cache is
// the cache) or a cached one, which is invalidated before every refresh.
func New(client cgdiscovery.DiscoveryInterface, opts Options) *Cache {
	c := &Cache{
		client:             client,
		metadata:           opts.Metadata,
		debounce:           opts.Debounce,
		pollInterval:       opts.PollInterval,
		minRefreshInterval: opts.MinRefreshInterval,
		log:                opts.Logger,
		snap:               &Snapshot{},
		subs:               map[*subscriber]struct{}{},
		gone:               map[schema.GroupResource]time.Time{},
		triggers:           make(chan struct{}, 1),
		requests:           make(chan struct{}, 1),
	}
	if c.debounce <= 0 {
		c.debounce = time.Second
	}
	if c.pollInterval <= 0 {
		c.pollInterval = 5 * time.Minute
	}
	if c.minRefreshInterval <= 0 {
		c.minRefreshInterval = 5 * time.Second
	}
	if c.log == nil {
		c.log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return c
}

// Snapshot returns the latest snapshot: empty before the first successful
// refresh, never nil. The same pointer is returned until the resources
// change.
func (c *Cache) Snapshot() *Snapshot {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.snap
}

// HasSynced reports whether a refresh has succeeded at least once.
func (c *Cache) HasSynced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.synced
}

// RequestRefresh asks the running Run loop for a rediscovery. It never
// blocks, coalesces with requests already pending, and is served no sooner
// than MinRefreshInterval after the previous refresh. Without Run the
// request waits until Run starts.
func (c *Cache) RequestRefresh() {
	select {
	case c.requests <- struct{}{}:
	default:
	}
}

// trigger tells the Run loop that a CRD or APIService changed.
func (c *Cache) trigger() {
	select {
	case c.triggers <- struct{}{}:
	default:
	}
}

// observed is what one discovery answer held before filtering, for telling
// whether the server has caught up with the CRDs and APIServices it has.
type observed struct {
	gvs map[schema.GroupVersion]bool
	grs map[schema.GroupResource]bool
}

// Refresh rediscovers synchronously, replaces the snapshot if anything
// changed and queues the diff for subscribers. It may be called from any
// goroutine, with or without Run; concurrent calls run one after another.
//
// An aggregated API that is down is not an error: its group versions keep
// the resources of the previous snapshot, and a warning is logged once.
// Any other failure leaves the snapshot as it was and is returned.
func (c *Cache) Refresh(ctx context.Context) error {
	c.refreshMu.Lock()
	defer c.refreshMu.Unlock()

	groups, lists, err := c.fetch(ctx)
	failed, partial := cgdiscovery.GroupDiscoveryFailedErrorGroups(err)
	if err != nil && !partial {
		c.mu.Lock()
		c.lastRefresh = time.Now()
		c.mu.Unlock()
		return fmt.Errorf("discover APIs: %w", err)
	}
	c.reportFailed(failed)

	next, seen := build(groups, lists, failed, c.Snapshot())

	c.mu.Lock()
	c.lastRefresh = time.Now()
	c.synced = true
	c.seen = seen
	if next.equal(c.snap) {
		c.mu.Unlock()
		return nil
	}
	// Publishing the snapshot and queueing its diff under one lock keeps
	// every subscriber's diffs consistent with Snapshot().
	d := diff(c.snap, next)
	c.snap = next
	if !d.Empty() {
		for s := range c.subs {
			s.push(d)
		}
	}
	c.mu.Unlock()
	c.log.Debug("discovery changed", "resources", len(next.Resources), "added", len(d.Added), "removed", len(d.Removed))
	return nil
}

// fetch asks the server for every group and resource; a client that
// speaks aggregated discovery does it in one request.
func (c *Cache) fetch(ctx context.Context) ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	switch cl := c.client.(type) {
	case cgdiscovery.CachedDiscoveryInterfaceWithContext:
		cl.InvalidateWithContext(ctx)
	case cgdiscovery.CachedDiscoveryInterface:
		cl.Invalidate()
	}
	if cl, ok := c.client.(cgdiscovery.ServerResourcesInterfaceWithContext); ok {
		return cl.ServerGroupsAndResourcesWithContext(ctx)
	}
	return c.client.ServerGroupsAndResources()
}

// reportFailed warns when the set of group versions that failed discovery
// changes, so an aggregated API that stays down is logged once.
func (c *Cache) reportFailed(failed map[schema.GroupVersion]error) {
	gvs := slices.SortedFunc(maps.Keys(failed), func(a, b schema.GroupVersion) int {
		return strings.Compare(a.String(), b.String())
	})
	keys := make([]string, len(gvs))
	for i, gv := range gvs {
		keys[i] = gv.String()
	}
	key := strings.Join(keys, ",")
	if key == c.failedKey {
		return
	}
	c.failedKey = key
	if len(gvs) == 0 {
		c.log.Info("discovery of all API groups succeeds again")
		return
	}
	errs := make([]error, len(gvs))
	for i, gv := range gvs {
		errs[i] = fmt.Errorf("%s: %w", gv, failed[gv])
	}
	c.log.Warn("discovery failed for some API groups; keeping their last known resources",
		"groupVersions", keys, "err", errors.Join(errs...))
}

// Subscribe calls fn with every non-empty diff published after Subscribe
// returns, in order, from one goroutine that belongs to this subscription.
// A slow fn delays only its own diffs, which queue without bound. cancel is
// idempotent, never blocks and may be called from fn; after it returns fn
// is not called again except for a call already under way.
func (c *Cache) Subscribe(fn func(Diff)) (cancel func()) {
	s := &subscriber{fn: fn, wake: make(chan struct{}, 1), done: make(chan struct{})}
	c.mu.Lock()
	c.subs[s] = struct{}{}
	c.mu.Unlock()
	go s.run()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			delete(c.subs, s)
			c.mu.Unlock()
			s.stop()
		})
	}
}

// subscriber owns one goroutine that hands queued diffs to fn in order.
type subscriber struct {
	fn   func(Diff)
	wake chan struct{}
	done chan struct{}

	mu      sync.Mutex
	queue   []Diff
	stopped bool
}

func (s *subscriber) push(d Diff) {
	s.mu.Lock()
	s.queue = append(s.queue, d)
	s.mu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (s *subscriber) stop() {
	s.mu.Lock()
	s.stopped = true
	s.queue = nil
	s.mu.Unlock()
	close(s.done)
}

func (s *subscriber) run() {
	for {
		select {
		case <-s.done:
			return
		case <-s.wake:
		}
		for {
			s.mu.Lock()
			if s.stopped || len(s.queue) == 0 {
				s.mu.Unlock()
				break
			}
			d := s.queue[0]
			s.queue[0] = Diff{}
			s.queue = s.queue[1:]
			s.mu.Unlock()
			s.fn(d)
		}
	}
}
