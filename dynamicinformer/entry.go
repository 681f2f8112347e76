package dynamicinformer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/internal/resume"
	"github.com/kreact/kreact/projection"
)

// entry is the state kept for one informer Key (Key.informerKey: Watches
// that differ only in their label selectors share it): its subscribers
// and, while the
// resource is served and readable, one running informer (instance). Its
// goroutine (run) owns the informer's life: it alone starts and stops
// instances, so at most one exists at a time.
type entry struct {
	m    *Manager
	key  Key
	log  *slog.Logger
	wake chan struct{}

	// Set by Manager.startLoopLocked under m.mu; nil before Run.
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	watches map[*Watch]struct{}
	phase   Phase
	err     error
	inst    *instance
	// noShard is set while a sharded entry waits for a range to own.
	noShard bool
	// carry says that the last instance stopped for a watch with another
	// label selector or more fields: its handlers' records are handed
	// over to the next (see Watch.registeredHandler).
	carry bool
}

// instance is one informer's life. Informers cannot be restarted, so a
// resource that comes back gets a new instance.
type instance struct {
	informer cache.SharedIndexInformer
	cancel   context.CancelFunc
	// done is closed when the informer has stopped and every handler
	// registered on it has returned.
	done chan struct{}
	// failed receives the first list/watch error that means the informer
	// cannot succeed as it is (404, 403).
	failed chan error
	// lw is the informer's list-watch; it counts the objects the cache
	// holds.
	lw interface{ Len() int }
	// shard is what a sharded instance selects; zero for others.
	shard    shardSpec
	filtered atomic.Int64
	// fields is the union of the fields of the watches when the instance
	// started: what its cache holds of each object.
	fields projection.Fields
	// labelSelector is what the instance sends to the server: the
	// watches' label selector when they all had the same one at its
	// start, else "" (they select locally).
	labelSelector string

	// warnings logs the list and watch failures retried, at Warn at
	// most once per RetryPeriod.
	warnings *resume.Warnings
}

func newEntry(m *Manager, key Key) *entry {
	return &entry{
		m:       m,
		key:     key,
		log:     m.log.With("watch", key),
		wake:    make(chan struct{}, 1),
		watches: map[*Watch]struct{}{},
		phase:   PhasePending,
	}
}

// poke wakes the entry's goroutine to re-read discovery. It never blocks.
func (e *entry) poke() {
	select {
	case e.wake <- struct{}{}:
	default:
	}
}

func (e *entry) pending() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.phase == PhasePending
}

// add subscribes w. If an informer is running, caches the fields w reads
// and holds every object w selects, w's handler joins it and is replayed
// the cache; if it does not, the entry's goroutine is woken to restart it
// with the wider union or without a server-side label selector (see
// supervise), and w's handler joins the new one.
func (e *entry) add(w *Watch) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.inst != nil && (!e.inst.fields.Covers(w.fields) || !e.inst.serves(w)) {
		e.poke()
	} else if e.inst != nil {
		reg, err := e.inst.informer.AddEventHandlerWithOptions(w.registeredHandler(e.inst, e.sharded(), false), e.handlerOptions())
		if err != nil {
			return err
		}
		w.inst, w.reg = e.inst, reg
	}
	e.watches[w] = struct{}{}
	if u := e.fieldsLocked(); !u.Equal(w.fields) {
		e.log.Debug("watches of this informer read different fields: it caches their union",
			"owner", w.owner, "fields", w.fields.String(), "union", u.String())
	}
	return nil
}

func (e *entry) handlerOptions() cache.HandlerOptions {
	l := e.klogger()
	return cache.HandlerOptions{Logger: &l}
}

// klogger routes client-go's contextual logging for this key to slog.
// klog's V(n) becomes slog level -n, so V(4) chatter lands at Debug.
func (e *entry) klogger() klog.Logger {
	return logr.FromSlogHandler(e.log.With("source", "client-go").Handler())
}

// fields is fieldsLocked under e.mu.
func (e *entry) fields() projection.Fields {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.fieldsLocked()
}

func (e *entry) setState(p Phase, err error) {
	e.mu.Lock()
	e.phase, e.err = p, err
	e.mu.Unlock()
}

func (e *entry) status() WatchStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	s := WatchStatus{Key: e.key, Phase: e.phase, Err: e.err, Owners: e.ownersLocked()}
	s.Key.LabelSelector = e.selectorLocked()
	for w := range e.watches {
		s.LabelSelectors = append(s.LabelSelectors, w.key.LabelSelector)
	}
	slices.Sort(s.LabelSelectors)
	s.LabelSelectors = slices.Compact(s.LabelSelectors)
	if e.inst != nil {
		s.Key.LabelSelector = e.inst.labelSelector
		s.Synced = e.inst.informer.HasSynced()
		s.Objects = e.inst.lw.Len()
		s.Shard = e.inst.shard.mode
		s.ShardFiltered = e.inst.filtered.Load()
	}
	if e.noShard {
		s.Shard = ShardNone
	}
	return s
}

// fieldsLocked returns the union of the fields of e's watches: what an
// instance started now caches.
func (e *entry) fieldsLocked() projection.Fields {
	if len(e.watches) == 0 {
		return projection.Fields{}
	}
	var u projection.Fields
	first := true
	for w := range e.watches {
		if first {
			u, first = w.fields, false
			continue
		}
		u = u.Union(w.fields)
	}
	return u
}

// selectorLocked returns the label selector an instance started now
// sends to the server: that of e's watches when they all have the same,
// else "" (each selects its own objects).
func (e *entry) selectorLocked() string {
	sel, first := "", true
	for w := range e.watches {
		switch {
		case first:
			sel, first = w.key.LabelSelector, false
		case w.key.LabelSelector != sel:
			return ""
		}
	}
	return sel
}

// selector is selectorLocked under e.mu.
func (e *entry) selector() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.selectorLocked()
}

// serves reports whether inst's cache holds every object w selects: it
// has no server-side label selector, or w's.
func (inst *instance) serves(w *Watch) bool {
	return inst.labelSelector == "" || inst.labelSelector == w.key.LabelSelector
}

// servesAllLocked reports whether inst serves every watch of e.
func (e *entry) servesAllLocked(inst *instance) bool {
	return inst.labelSelector == "" || inst.labelSelector == e.selectorLocked()
}

// errWiden says a watch needs fields the running instance does not cache.
var errWiden = errors.New("watch needs more fields")

// errUnselect says a watch selects objects the running instance's
// server-side label selector leaves out.
var errUnselect = errors.New("watch has another label selector")

// errRemoved says discovery no longer lists the resource.
var errRemoved = errors.New("resource removed from discovery")

// run is the entry's goroutine. It loops: wait for the resource to be
// served, take a start slot, preflight, start an informer, release the
// slot once synced, and stop the informer when the resource goes away,
// permissions are lost, or the entry is cancelled.
func (e *entry) run() {
	defer close(e.done)
	ctx := e.ctx
	r := retrier{first: firstRetryDelay, max: e.m.opts.RetryPeriod}
	announced := false // "waiting for resource" or "removed" said once
	var lastWarn string
	for ctx.Err() == nil {
		res, ok := e.m.src.Snapshot().Lookup(e.key.GVR)
		if !ok {
			e.setState(PhasePending, nil)
			switch {
			case !sourceSynced(e.m.src):
				// Everything is missing before discovery's first answer,
				// which will come as a diff: nothing to say yet.
			case !announced:
				e.log.Info("waiting for resource to appear in discovery", "owners", e.owners())
				announced = true
				e.m.src.RequestRefresh()
			}
			e.sleep(ctx, 0)
			continue
		}
		if e.key.Namespace != "" && !res.Namespaced {
			err := fmt.Errorf("%s is cluster-scoped: the watch must not name a namespace", e.key.GVR.GroupResource())
			e.setState(PhaseFailed, err)
			lastWarn = e.warnOnce(lastWarn, "watch cannot start", err)
			e.sleep(ctx, e.m.opts.RetryPeriod)
			continue
		}
		var spec shardSpec
		if e.sharded() {
			var owns bool
			if spec, owns = e.currentShard(res); !owns {
				e.mu.Lock()
				e.phase, e.err, e.noShard = PhasePending, nil, true
				e.mu.Unlock()
				e.log.Info("sharded watch waits: this replica owns no shard")
				e.sleep(ctx, 0)
				continue
			}
		}
		e.mu.Lock()
		e.noShard = false
		if e.phase != PhaseForbidden && e.phase != PhaseFailed {
			// A retry keeps showing why it is retried until it succeeds.
			e.phase = PhaseStarting
		}
		e.mu.Unlock()

		if !e.acquire(ctx) {
			break
		}
		sel := e.selector()
		if err := e.preflight(ctx, res, sel, &spec); err != nil {
			e.release()
			if ctx.Err() != nil {
				break
			}
			var fe *ForbiddenError
			switch {
			case errors.As(err, &fe):
				e.setState(PhaseForbidden, err)
				lastWarn = e.warnOnce(lastWarn, "watch not permitted, retrying periodically", err)
				r.reset()
				e.sleep(ctx, e.m.opts.RetryPeriod)
			case apierrors.IsNotFound(err):
				// Discovery is behind the server: ask it to catch up.
				e.setState(PhasePending, nil)
				e.log.Debug("resource listed by discovery but not served", "err", err)
				e.m.src.RequestRefresh()
				e.sleep(ctx, r.next())
			case isPermanent(err):
				e.setState(PhaseFailed, err)
				lastWarn = e.warnOnce(lastWarn, "watch rejected by the server, retrying periodically", err)
				e.sleep(ctx, e.m.opts.RetryPeriod)
			default:
				e.setState(PhaseStarting, err)
				lastWarn = e.warnOnce(lastWarn, "cannot reach resource, retrying", err)
				e.sleep(ctx, r.next())
			}
			continue
		}

		if spec.selector != "" {
			e.log.Info("sharded informer", "mode", spec.mode, "key", spec.key, "range", spec.rng.String())
		}
		inst := e.start(ctx, res, sel, spec)
		reason := e.supervise(ctx, inst, &r)
		e.stopInstance(inst)
		e.mu.Lock()
		e.carry = errors.Is(reason, errUnselect) || errors.Is(reason, errWiden)
		e.mu.Unlock()
		lastWarn = ""
		switch {
		case ctx.Err() != nil:
		case errors.Is(reason, errWiden):
			e.setState(PhaseStarting, nil)
			e.log.Info("a new watch reads more fields: informer restarts caching them", "fields", e.fields().String())
		case errors.Is(reason, errUnselect):
			// The watches already on it are handed over (see
			// Watch.registeredHandler): they lose and repeat nothing.
			e.setState(PhaseStarting, nil)
			e.log.Info("watches of this informer have different label selectors: it restarts listing every object, and each selects its own",
				"labelSelectors", e.status().LabelSelectors)
		case errors.Is(reason, errReshard):
			// Restart at once on the new range: objects gained arrive as
			// initial adds; those lost are no longer delivered.
			e.setState(PhaseStarting, nil)
			e.log.Info("shard range changed: informer restarts on the new range")
		case errors.Is(reason, errRemoved) || apierrors.IsNotFound(reason):
			e.setState(PhasePending, nil)
			e.log.Info("resource no longer served: informer stopped; the watch resumes when it is served again",
				"owners", e.owners())
			announced = true
			if apierrors.IsNotFound(reason) {
				e.m.src.RequestRefresh()
				r.reset()
				e.sleep(ctx, r.next())
			}
		case apierrors.IsForbidden(reason):
			err := &ForbiddenError{Verb: forbiddenVerb(reason), Resource: e.key.GVR.GroupResource(),
				Namespace: e.key.Namespace, Scope: e.key.where(res.Namespaced), Err: reason}
			e.setState(PhaseForbidden, err)
			lastWarn = e.warnOnce(lastWarn, "permission lost: informer stopped, retrying periodically", err)
			e.sleep(ctx, e.m.opts.RetryPeriod)
		default:
			e.setState(PhaseStarting, reason)
			lastWarn = e.warnOnce(lastWarn, "informer stopped, restarting", reason)
			e.sleep(ctx, r.next())
		}
	}
	e.setState(PhaseStopped, nil)
}

// warnOnce logs err at Warn unless it says what the last warning said,
// then at Debug; it returns the text to pass next time.
func (e *entry) warnOnce(last, msg string, err error) string {
	if s := err.Error(); s != last {
		e.log.Warn(msg, "err", err)
		return s
	}
	e.log.Debug(msg, "err", err)
	return last
}

// owners returns the sorted owners of the entry's watches, for logs.
func (e *entry) owners() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.ownersLocked()
}

func (e *entry) ownersLocked() []string {
	out := make([]string, 0, len(e.watches))
	for w := range e.watches {
		out = append(out, w.owner)
	}
	slices.Sort(out)
	return out
}

// sourceSynced reports whether src has answered at least once, for
// sources that can tell (discovery.Cache); others count as synced.
func sourceSynced(src discovery.Source) bool {
	s, ok := src.(interface{ HasSynced() bool })
	return !ok || s.HasSynced()
}

// sleep waits for d (forever if d <= 0), a poke, or the end of ctx.
func (e *entry) sleep(ctx context.Context, d time.Duration) {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
	case <-e.wake:
	case <-timer:
	}
}

func (e *entry) acquire(ctx context.Context) bool {
	select {
	case e.m.gate <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (e *entry) release() { <-e.m.gate }

// preflight lists one object and opens (and closes) a watch, with the
// key's namespace and field selector and the label selector labelSelector
// (see selectorLocked), so that a missing permission, an unknown
// resource or a bad selector is reported before an informer starts and
// retries it forever. For a sharded key (spec.selector set) the list
// carries the shardSelector, and the answer sets spec.mode: ShardServer
// if the server echoed the selector in shardInfo, else ShardClient.
func (e *entry) preflight(ctx context.Context, res apiresource.Resource, labelSelector string, spec *shardSpec) error {
	ri := e.m.client.Resource(e.key.GVR).Namespace(e.key.Namespace)
	opts := metav1.ListOptions{LabelSelector: labelSelector, FieldSelector: e.key.FieldSelector, Limit: 1,
		ShardSelector: spec.selector}
	list, err := ri.List(ctx, opts)
	if err != nil {
		return e.preflightError("list", res, err)
	}
	if spec.selector != "" {
		spec.mode = ShardClient
		if shardInfoSelector(list) != "" {
			spec.mode = ShardServer
		} else {
			opts.ShardSelector = ""
		}
	}
	opts.Limit = 0
	opts.ResourceVersion = list.GetResourceVersion()
	opts.TimeoutSeconds = ptr.To[int64](1)
	w, err := ri.Watch(ctx, opts)
	if err != nil {
		return e.preflightError("watch", res, err)
	}
	w.Stop()
	return nil
}

func (e *entry) preflightError(verb string, res apiresource.Resource, err error) error {
	if apierrors.IsForbidden(err) {
		return &ForbiddenError{Verb: verb, Resource: e.key.GVR.GroupResource(),
			Namespace: e.key.Namespace, Scope: e.key.where(res.Namespaced), Err: err}
	}
	return fmt.Errorf("%s %s%s: %w", verb, e.key.GVR.GroupResource(), e.key.where(res.Namespaced), err)
}

// isPermanent reports errors that repeating the same request won't fix.
func isPermanent(err error) bool {
	return apierrors.IsBadRequest(err) || apierrors.IsInvalid(err) || apierrors.IsMethodNotSupported(err)
}

// forbiddenVerb guesses the verb from the API server's message ("... cannot
// watch resource ..."), for 403s the informer itself met.
func forbiddenVerb(err error) string {
	msg := err.Error()
	for _, v := range []string{"watch", "list"} {
		if strings.Contains(msg, "cannot "+v) {
			return v
		}
	}
	return "list or watch"
}

// indexers returns the indexes of key's cache: by namespace when it
// holds several namespaces, none when it holds one (Watch.List reads all
// of it for that namespace), since an index entry costs about 35 bytes per
// object, 35 MB of a million objects that all have the same namespace.
func indexers(key Key) cache.Indexers {
	if key.Namespace != "" {
		return cache.Indexers{}
	}
	return cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}
}

// start builds and runs a new informer for the key, with labelSelector
// sent to the server, and every current subscriber it serves registered
// before it runs, so they all get the initial list as it arrives.
func (e *entry) start(ctx context.Context, res apiresource.Resource, labelSelector string, spec shardSpec) *instance {
	ictx, cancel := context.WithCancel(klog.NewContext(ctx, e.klogger()))
	inst := &instance{
		cancel:        cancel,
		done:          make(chan struct{}),
		failed:        make(chan error, 1),
		shard:         spec,
		labelSelector: labelSelector,
		warnings:      &resume.Warnings{Log: e.log, Msg: "list/watch failed, retrying", Every: e.m.opts.RetryPeriod},
	}
	key := e.key
	inst.fields = e.fields()
	tweak := func(o *metav1.ListOptions) {
		o.LabelSelector = labelSelector
		o.FieldSelector = key.FieldSelector
		if spec.mode == ShardServer {
			o.ShardSelector = spec.selector
		}
	}
	var keep func(runtime.Object) bool
	if spec.selector != "" {
		// Also in server mode: what the server sends is checked with the
		// same hash, and ShardFiltered stays 0 when it filtered.
		keep = spec.keep(func() { inst.filtered.Add(1) })
	}
	transient := func(err error) { inst.watchError(ictx, nil, err) }
	var lw interface {
		cache.ListerWatcher
		SetStore(resume.Store)
		Len() int
	}
	switch {
	case inst.fields.MetadataOnly() && e.m.opts.Metadata != nil:
		toObject, shapeObject := fromMetadata(res), shape(inst.fields)
		lw = resume.New(e.m.opts.Metadata.Resource(key.GVR).Namespace(key.Namespace),
			func(l *metav1.PartialObjectMetadataList) *[]metav1.PartialObjectMetadata { return &l.Items },
			resume.Options[*metav1.PartialObjectMetadata]{
				Tweak: tweak, Transient: transient, Keep: keepAs[*metav1.PartialObjectMetadata](keep),
				Shape: func(p *metav1.PartialObjectMetadata) resume.Object { return shapeObject(toObject(p)) },
			})
	case e.m.opts.REST != nil:
		lw = resume.New(restResource{e.m.opts.REST, key.GVR, key.Namespace},
			func(l *compactList) *[]compactObject { return &l.Items },
			resume.Options[*compactObject]{
				Tweak: tweak, Transient: transient, Keep: keepAs[*compactObject](keep),
				Shape: project(inst.fields), Bookmark: bookmark,
			})
	default:
		lw = resume.New(e.m.client.Resource(key.GVR).Namespace(key.Namespace),
			func(l *unstructured.UnstructuredList) *[]unstructured.Unstructured { return &l.Items },
			resume.Options[*unstructured.Unstructured]{
				Tweak: tweak, Transient: transient, Keep: keepAs[*unstructured.Unstructured](keep),
				Shape: shape(inst.fields),
			})
	}
	inf := cache.NewSharedIndexInformerWithOptions(lw, &compactObject{}, cache.SharedIndexInformerOptions{
		ResyncPeriod:      e.m.opts.ResyncPeriod,
		Indexers:          indexers(key),
		ObjectDescription: key.GVR.String(),
	})
	// A relist after an expired watch diffs against the cache.
	lw.SetStore(inf.GetIndexer())
	// It cannot fail on an informer that has not started.
	_ = inf.SetWatchErrorHandlerWithContext(inst.watchError)
	opts := e.handlerOptions()
	inst.informer, inst.lw = inf, lw

	e.mu.Lock()
	for w := range e.watches {
		if !inst.serves(w) {
			continue // it joined since labelSelector was read: poked below
		}
		if reg, err := inf.AddEventHandlerWithOptions(w.registeredHandler(inst, e.sharded(), e.carry), opts); err == nil {
			w.inst, w.reg = inst, reg
		}
	}
	if !inst.fields.Covers(e.fieldsLocked()) || !e.servesAllLocked(inst) {
		// A watch joined while the instance was being built: restart
		// with its fields or selector too (supervise reads the wake-up).
		e.poke()
	}
	e.inst = inst
	e.phase, e.err = PhaseStarting, nil
	e.mu.Unlock()

	go func() {
		defer close(inst.done)
		inf.RunWithContext(ictx)
	}()
	return inst
}

// supervise holds the start slot until inst has synced, then watches for
// the resource leaving discovery or the informer failing. It returns why
// the informer must stop, or ctx's error.
func (e *entry) supervise(ctx context.Context, inst *instance, r *retrier) error {
	synced := inst.informer.HasSyncedChecker().Done()
	holding := true
	defer func() {
		if holding {
			e.release()
		}
	}()
	// handedOver polls, once the informer has synced, until every
	// handover has caught up and let the previous instance's record go.
	var handedOver <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-synced:
			synced = nil
			holding = false
			e.release()
			e.setState(PhaseSynced, nil)
			r.reset()
			e.log.Debug("informer synced", "objects", inst.lw.Len())
			if e.handingOver(inst) {
				t := time.NewTicker(handoverPoll)
				defer t.Stop()
				handedOver = t.C
			}
		case <-handedOver:
			if e.releaseHandovers(inst) {
				handedOver = nil
			}
		case err := <-inst.failed:
			return err
		case <-e.wake:
			res, ok := e.m.src.Snapshot().Lookup(e.key.GVR)
			if !ok {
				return errRemoved
			}
			if !inst.fields.Covers(e.fields()) {
				return errWiden
			}
			e.mu.Lock()
			all := e.servesAllLocked(inst)
			e.mu.Unlock()
			if !all {
				return errUnselect
			}
			if e.sharded() {
				if spec, owns := e.currentShard(res); !owns || spec.rng != inst.shard.rng {
					return errReshard
				}
			}
		case <-inst.done:
			return errors.New("informer stopped unexpectedly")
		}
	}
}

// handoverPoll is how often a sharded entry checks whether its handlers
// have caught up with a new instance's initial list (releaseHandovers).
const handoverPoll = 100 * time.Millisecond

// handingOver reports whether a handler of inst took a record over from
// a previous instance (see handover), or may: sharded ones do at every
// restart.
func (e *entry) handingOver(inst *instance) bool {
	if e.sharded() {
		return true
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	for w := range e.watches {
		if w.inst == inst && w.ho != nil && w.ho.handingOver() {
			return true
		}
	}
	return false
}

// releaseHandovers lets the previous instance's record of every handler
// of inst go once that handler has received inst's initial list. It
// reports whether all have. The handovers are released without e.mu:
// releasing may call a handler (see handover.release), and handlers may
// call Manager.Watch and the cache reads, which take it.
func (e *entry) releaseHandovers(inst *instance) bool {
	e.mu.Lock()
	done := true
	var ready []*Watch
	for w := range e.watches {
		if w.inst != inst || w.ho == nil {
			continue
		}
		if !w.reg.HasSynced() {
			done = false
			continue
		}
		ready = append(ready, w)
	}
	hos := make([]*handover, len(ready))
	for i, w := range ready {
		hos[i] = w.ho
	}
	e.mu.Unlock()
	idx := inst.informer.GetIndexer()
	for i, ho := range hos {
		ho.release(func(namespace, name string) (any, bool) {
			k := name
			if namespace != "" {
				k = namespace + "/" + name
			}
			obj, ok, err := idx.GetByKey(k)
			return obj, ok && err == nil
		}, ready[i].sel)
	}
	return done
}

// stopInstance stops inst and waits until its handlers have returned, so
// that a handler never runs in two instances at once.
func (e *entry) stopInstance(inst *instance) {
	e.mu.Lock()
	if e.inst == inst {
		e.inst = nil
	}
	e.mu.Unlock()
	inst.cancel()
	<-inst.done
}

// watchError replaces client-go's default handler, which logs every
// failure at error level: a deleted CRD would log a 404 every few seconds
// forever. 404 and 403 go to the entry's goroutine, which stops the
// informer; other errors are logged at Warn at most once per RetryPeriod.
func (inst *instance) watchError(_ context.Context, _ *cache.Reflector, err error) {
	switch {
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		select {
		case inst.failed <- err:
		default:
		}
	default:
		inst.warnings.Failed(err)
	}
}

// counter keeps instance.objects equal to the number of cached objects as
// delivered to handlers.
// retrier is a capped exponential back-off.
type retrier struct {
	first, max, cur time.Duration
}

func (r *retrier) next() time.Duration {
	switch {
	case r.cur == 0:
		r.cur = r.first
	case r.cur < r.max:
		r.cur *= 2
	}
	r.cur = min(r.cur, r.max)
	return r.cur
}

func (r *retrier) reset() { r.cur = 0 }
