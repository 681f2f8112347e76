package discovery

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/internal/resume"
)

var (
	crdGVR        = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}
	apiServiceGVR = schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"}
)

// watchWarnEvery is how often at most a failing watch for discovery
// triggers logs a warning; the other failures are logged at debug level.
const watchWarnEvery = time.Minute

// goneChase is how long Run keeps refreshing for a deleted CRD whose
// resource discovery still serves.
const goneChase = time.Minute

// Run keeps the cache fresh until ctx ends: it refreshes at once, then on
// CRD and APIService changes (debounced), on RequestRefresh (rate-limited),
// every PollInterval, and with backoff while a refresh fails or while the
// server's discovery has not caught up with its CRDs and APIServices (two
// backoffs, each from Debounce: an outage does not slow the chase after it).
// It returns nil once ctx has ended and every goroutine it started has
// stopped, or an error at once if the cache is already running.
func (c *Cache) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errors.New("discovery: Run called while already running")
	}
	defer c.running.Store(false)

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()

	var crds, apiServices cache.Store
	if c.metadata != nil {
		crds = c.watch(ctx, &wg, crdGVR)
		apiServices = c.watch(ctx, &wg, apiServiceGVR)
	}
	c.loop(ctx, func() bool { return c.settled(crds, apiServices) })
	return nil
}

// watch starts a metadata informer on gvr whose every change triggers a
// refresh, and returns its store. Its list-watch is internal/resume's, as
// for the rules' informers: after an outage it reconnects within a second
// rather than after client-go's backoff of up to a minute, so a CRD
// created then is seen promptly, and the informer stops as soon as ctx
// ends, which Run waits for.
func (c *Cache) watch(ctx context.Context, wg *sync.WaitGroup, gvr schema.GroupVersionResource) cache.Store {
	warnings := &resume.Warnings{Log: c.log.With("resource", gvr.String()), Every: watchWarnEvery,
		Msg: "watch for discovery triggers failed; retrying, new APIs are seen by polling meanwhile"}
	warn := func(err error) {
		if ctx.Err() == nil {
			warnings.Failed(err)
		}
	}
	lw := resume.New(c.metadata.Resource(gvr),
		func(l *metav1.PartialObjectMetadataList) *[]metav1.PartialObjectMetadata { return &l.Items },
		resume.Options[*metav1.PartialObjectMetadata]{Transient: warn})
	informer := cache.NewSharedIndexInformerWithOptions(lw, &metav1.PartialObjectMetadata{},
		cache.SharedIndexInformerOptions{ObjectDescription: gvr.String()})
	lw.SetStore(informer.GetIndexer())
	_ = informer.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) { warn(err) })
	_, _ = informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { c.trigger() },
		UpdateFunc: func(oldObj, newObj any) {
			o, okOld := oldObj.(*metav1.PartialObjectMetadata)
			n, okNew := newObj.(*metav1.PartialObjectMetadata)
			if okOld && okNew && o.ResourceVersion == n.ResourceVersion {
				return
			}
			c.trigger()
		},
		DeleteFunc: func(obj any) {
			if gvr == crdGVR {
				if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
					obj = tomb.Obj
				}
				if m, ok := obj.(*metav1.PartialObjectMetadata); ok {
					if plural, group, ok := strings.Cut(m.Name, "."); ok {
						c.mu.Lock()
						c.gone[schema.GroupResource{Group: group, Resource: plural}] = time.Now().Add(goneChase)
						c.mu.Unlock()
					}
				}
			}
			c.trigger()
		},
	})
	wg.Go(func() { informer.RunWithContext(ctx) })
	return informer.GetStore()
}

// settled reports whether the last discovery answer agrees with the CRDs
// and APIServices the informers hold: every CRD's resource and every
// APIService's group version is served, and no recently deleted CRD's
// resource still is. Discovery lags both, so until it agrees Run refreshes
// again with backoff.
func (c *Cache) settled(crds, apiServices cache.Store) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	seen := c.seen
	now := time.Now()
	settled := true
	for gr, until := range c.gone {
		switch {
		case !seen.grs[gr] || now.After(until):
			delete(c.gone, gr)
		default:
			settled = false
		}
	}
	if crds != nil {
		for _, obj := range crds.List() {
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok || m.DeletionTimestamp != nil {
				continue
			}
			// A CRD is named <plural>.<group>.
			if plural, group, ok := strings.Cut(m.Name, "."); ok && !seen.grs[schema.GroupResource{Group: group, Resource: plural}] {
				settled = false
			}
		}
	}
	if apiServices != nil {
		for _, obj := range apiServices.List() {
			m, ok := obj.(*metav1.PartialObjectMetadata)
			if !ok || m.DeletionTimestamp != nil {
				continue
			}
			// An APIService is named <version>.<group>; the core one "v1.".
			if version, group, ok := strings.Cut(m.Name, "."); ok && !seen.gvs[schema.GroupVersion{Group: group, Version: version}] {
				settled = false
			}
		}
	}
	return settled
}

// loop runs refreshes when they are due until ctx ends. Each kind of
// reason keeps its own deadline; one refresh satisfies them all.
func (c *Cache) loop(ctx context.Context, settled func() bool) {
	var (
		now        = time.Now()
		debounceAt time.Time // trailing edge of a burst of triggers
		burstStart time.Time // first trigger of the burst, to cap the delay
		triggered  bool      // a trigger arrived since the last refresh
		requestAt  time.Time // RequestRefresh, rate-limited
		followUpAt time.Time // once after a triggered refresh
		chaseAt    time.Time // retry after an error, or discovery lagging
		backoff    = c.debounce
		failing    bool  // the last refresh failed
		pollAt     = now // the first refresh happens at once
	)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.triggers:
			now = time.Now()
			if burstStart.IsZero() {
				burstStart = now
			}
			debounceAt = earliest(now.Add(c.debounce), burstStart.Add(10*c.debounce))
			triggered = true
		case <-c.requests:
			now = time.Now()
			c.mu.Lock()
			at := c.lastRefresh.Add(c.minRefreshInterval)
			c.mu.Unlock()
			requestAt = earliest(requestAt, latest(at, now))
		case <-timer.C:
		}

		now = time.Now()
		due := earliest(debounceAt, requestAt, followUpAt, chaseAt, pollAt)
		if !due.After(now) {
			wasTriggered := triggered
			debounceAt, burstStart, triggered, requestAt, followUpAt, chaseAt = time.Time{}, time.Time{}, false, time.Time{}, time.Time{}, time.Time{}
			err := c.Refresh(ctx)
			if ctx.Err() != nil {
				return
			}
			now = time.Now()
			pollAt = now.Add(c.pollInterval)
			if wasTriggered {
				followUpAt = now.Add(2 * c.debounce)
			}
			if (err != nil) != failing {
				// Failures and discovery's lag back off separately: chasing
				// a CRD created after an outage must not wait as long as
				// the last retry during the outage did.
				failing, backoff = err != nil, c.debounce
			}
			switch {
			case err != nil:
				c.log.Warn("discovery refresh failed; retrying", "in", backoff, "err", err)
				chaseAt = now.Add(backoff)
				backoff = min(2*backoff, c.pollInterval)
			case !settled():
				c.log.Debug("discovery has not caught up with CRDs and APIServices yet", "retryIn", backoff)
				chaseAt = now.Add(backoff)
				backoff = min(2*backoff, c.pollInterval)
			default:
				backoff = c.debounce
			}
			due = earliest(debounceAt, requestAt, followUpAt, chaseAt, pollAt)
		}
		timer.Reset(due.Sub(now))
	}
}

// earliest returns the earliest non-zero time, or the zero time.
func earliest(ts ...time.Time) time.Time {
	var e time.Time
	for _, t := range ts {
		if !t.IsZero() && (e.IsZero() || t.Before(e)) {
			e = t
		}
	}
	return e
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
