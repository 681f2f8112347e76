package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rules"
)

// Caller runs a rule's handlers; a *scripting.Runtime is one. Each worker
// of a Core has its own. Invoke returns what a call that returned
// normally asked for: its actions and its timer.
type Caller interface {
	Invoke(ev event.Event) (event.Outcome, error)
}

// A Server is a Caller with a goroutine of its own, on which it makes
// calls without handing them over to it (*scripting.Runtime.Serve). Run
// gives each such Caller its worker loop; see scripting.Runtime.Serve for
// what happens to a call stuck in built-in code.
type Server interface {
	Caller
	Serve(step func() bool, abandoned func(error))
}

// Sink takes the actions of the calls that succeeded, in the order they
// were asked for; an *actions.Queue is one. Each method calls done exactly
// once, when the action is finished (executed, refused, given up or
// dropped), with its error (nil when it succeeded).
type Sink interface {
	// EnqueueResult hands a over; it must not block.
	EnqueueResult(a actions.Action, done func(error))
	// Execute hands a over for a worker that waits for it: it may make
	// the action's first attempt on the calling goroutine, before it
	// returns, which spares two hand-overs between goroutines per call.
	// ctx ends the wait, not the action.
	Execute(ctx context.Context, a actions.Action, done func(error))
}

// Handlers tells which handlers a rule's script declares; a
// *scripting.Program is one.
type Handlers interface {
	HasHandler(t event.Type) bool
}

// reaches reports whether a change of type t calls one of the rule's
// handlers: spec.events lists it and the script declares its handler.
func reaches(rule *rules.Rule, handlers Handlers, t event.Type) bool {
	return rule.Handles(t) && handlers.HasHandler(t)
}

// NeedsWatch reports whether the informers of a rule's spec.watch serve
// it: a change reaches a handler, a timer may fall due (onTimer; timers an
// earlier version of the rule left on the objects included),
// spec.finalizer puts its finalizer on the objects, or onTick runs, which
// may read them. A rule with admission handlers alone has no use for
// them: the API server sends those handlers each request.
func NeedsWatch(rule *rules.Rule, handlers Handlers) bool {
	for _, t := range []event.Type{event.Add, event.Update, event.Delete} {
		if reaches(rule, handlers, t) {
			return true
		}
	}
	return handlers.HasHandler(event.Timer) || rule.Finalizer || (rule.Ticks() && handlers.HasHandler(event.Tick))
}

// Cache gives the newest state of an object as the informer of source
// holds it, which can be newer than the last change handed to Observe
// (informers update their store before they notify). A *dynamicinformer.Watch
// per source is one.
type Cache interface {
	Get(source int, namespace, name string) (*unstructured.Unstructured, bool)
	// Newer is Get for an object of the given incarnation (uid) at
	// another resourceVersion than rv: it returns false when the cache
	// holds that very state, or none of that incarnation. A cache that
	// keeps objects compactly answers false without decoding anything,
	// which is the common case of every call.
	Newer(source int, namespace, name string, uid types.UID, rv string) (*unstructured.Unstructured, bool)
}

// Observer is told what a Core does, for metrics. Its methods must be
// cheap and safe for concurrent use.
type Observer interface {
	// Event is called for every change an informer reports to the rule
	// that the rule has a handler for (before coalescing).
	Event(rule, resource string, t event.Type)
	// HandlerCall is called after every handler call, with its error.
	HandlerCall(rule string, t event.Type, d time.Duration, err error)
	// HandlerGivenUp is called when a failed call has used up its
	// retries, with its last error.
	HandlerGivenUp(rule string, t event.Type, err error)
	// ChangesDropped is called when a rule with delivery "every" drops
	// changes because its queue is full.
	ChangesDropped(rule string, n int)
}

// Failures is told of every handler call that failed, a control path
// where Observer is for metrics: package isolation moves a rule whose
// calls hog the process. CallFailed is called from the Core's workers,
// concurrently, after the Observer's HandlerCall and before the call is
// settled (retried or given up); it must return quickly.
type Failures interface {
	CallFailed(rule string, err error)
}

// Options configure a Core. The zero value is usable.
type Options struct {
	// Logger receives a line per failed, retried, given-up or dropped
	// call, a failure that repeats summarised (see failureLogEvery); the
	// Core adds rule=NAME. Nil means slog.Default().
	Logger *slog.Logger
	// Observer, if set, is told about changes and calls.
	Observer Observer
	// Failures, if set, is told of every handler call that failed. Nil
	// means no one is.
	Failures Failures
	// BaseDelay and MaxDelay bound the exponential backoff between the
	// retries of a failed call. Zero means 200ms and 30s. A negative
	// BaseDelay retries at once (offline tests, whose clock stands still).
	BaseDelay, MaxDelay time.Duration
	// MetricsProvider receives the workqueue's metrics. Nil means
	// client-go's global provider.
	MetricsProvider workqueue.MetricsProvider
	// Cache, if set, gives each call the newest state of its object, as a
	// controller reading its lister gets it, and tells whether an object
	// still exists when a timer is armed. Nil means the state of the last
	// change observed.
	Cache Cache
	// Clock is the clock of timers and scheduled ticks, shared with the
	// workqueue. Nil means the real clock. Offline tests move a fake one
	// and call Fire.
	Clock clock.WithTicker
	// Schedules, if set, tells whether this process makes the onTick
	// calls of a rule whose ticks are once per cluster (spec.tickScope
	// cluster, the default): kreact run --shards makes them on one
	// replica. Nil means here.
	Schedules ScheduleOwner
	// Trace bounds the trace of the rule's decisions, calls and actions
	// per object (see Core.Trace). The zero value keeps none, and
	// costs a nil check per change.
	Trace TraceSize
}

// ScheduleOwner tells whether this process makes the once-per-cluster
// ticks when they fall due; a *shard.Membership is one. OwnsSchedules
// must be cheap and safe for concurrent use.
type ScheduleOwner interface {
	OwnsSchedules() bool
}

// restFactor and maxRest pace a rule whose calls fail after using the
// CPU: its worker rests restFactor times the CPU time of the failed call
// (event.ScriptError.CPU), at most maxRest, before it takes the next
// object. Timeouts and memory limits stop one call, but a rule that loops
// or allocates on every object starts the next one at once, and on a
// small machine a few such rules take the CPUs, the memory bandwidth and
// the collector's time from everything else (a call stopped for its
// memory limit rests longer, see garbageRate): measured with the hostile
// scripts of the engine's memory test on two cores, a good rule's p99
// beside them went from 9ms to over 100ms. Resting, a failing worker uses
// at most 1/(1+restFactor) of a CPU; a call that fails fast (a throw, a
// refused action) rests for microseconds, and calls that return normally
// never rest. Nothing is dropped: the objects wait in the queue,
// coalescing. Offline tests (Drain) do not rest.
const (
	restFactor = 10
	// garbageRate is the most garbage a failing worker makes per second,
	// as it rests: a call stopped for its memory limit rests for what it
	// allocated at this rate (2s for the default limit of 64 MiB), if
	// that is longer than ten times its CPU time. Its cost to the other
	// rules is mostly the garbage, which Go's collector cleans up for the
	// whole process, stopping every goroutine each time, rather than its
	// CPU time: measured beside the hostile rules of issue 10
	// (BenchmarkHostileNeighbours), the good rule's p99 went from 1.6–50
	// times its quiet p99 (median 2.9) to 1.05–2.0 times (median 1.5)
	// in nine interleaved pairs; resting 1s did worse, 5s no better.
	//
	// Only a call that used at least garbageRestCPU rests so: where the
	// system gives no per-call figure, a call is charged with what the
	// process allocated while it ran (see package internal/governor),
	// so a short call beside a hog could be stopped by mistake there, and
	// it must not hold its rule up for seconds. Making 64 MiB of garbage
	// takes milliseconds of CPU; a typical call uses microseconds.
	garbageRate    = 32 << 20
	garbageRestCPU = 2 * time.Millisecond
	maxRest        = time.Minute
	// restLogged is the shortest rest the failure's log line mentions.
	restLogged = 10 * time.Millisecond
)

// RestAfter is how long a worker of `kreact run` rests after a call that
// ended with err (see restFactor); package metrics counts it.
func RestAfter(err error) time.Duration {
	var se *event.ScriptError
	if !errors.As(err, &se) {
		return 0
	}
	rest := restFactor * se.CPU
	if se.Memory && se.CPU >= garbageRestCPU {
		rest = max(rest, time.Duration(se.Allocated)*time.Second/garbageRate)
	}
	return min(rest, maxRest)
}

// stuckDelay is how long a change waits when every runtime of its worker
// is stuck in built-in code (event.ErrStuck); it is not a retry.
const stuckDelay = time.Second

// dropLogEvery rate-limits the log line about dropped changes.
const dropLogEvery = 10 * time.Second

// Core brings the changes of one rule's objects to its handlers and
// the actions of successful calls to its Sink. See the package doc for
// the semantics.
type Core struct {
	rule   *rules.Rule
	sink   Sink
	opts   Options
	log    *slog.Logger
	clock  clock.WithTicker
	want   wants
	tick   bool
	every  bool
	ignore []string
	// needsWatch is NeedsWatch of the rule and its handlers.
	needsWatch bool
	// ticks schedules onTick; nil without spec.every.
	ticks ticks
	// schedules tells whether a due tick is made here; nil for always.
	schedules ScheduleOwner
	// fin is the state of the rule's finalizer (finalize.go); nil
	// without spec.finalizer.
	fin *finalizing

	queue    workqueue.TypedRateLimitingInterface[objectKey]
	stopping atomic.Bool
	// failures rate-limits the lines of failed calls (faillog.go).
	failures *failureLog

	mu      sync.Mutex
	pending map[objectKey]*entry
	// ahead holds, per object, the resourceVersion of a state a call was
	// given from the cache before its change was observed (see freshen):
	// changes up to that version have been seen and are not delivered.
	ahead       map[objectKey]uint64
	queued      int // delivery "every": changes waiting
	dropped     int // changes dropped since the last log line
	lastDropLog time.Time
	// nextTick is when the next scheduled onTick is due; zero for none.
	nextTick time.Time

	// trace, if not nil, keeps the latest records per object (trace.go);
	// unhandled says why a kind of change calls no handler.
	trace     *trace
	unhandled map[event.Type]string
	// sources holds the resource of each informer observed, by index,
	// so that Trace looks objects up rather than scanning pending.
	sources []schema.GroupResource
	// events holds, with spec.recordEvents, when each object last had an
	// Event recorded (events.go).
	events map[objectKey]time.Time
	// once is what kreact.once needs (once.go).
	once onceMarks
}

// tickKey is the key of the rule's onTick calls.
var tickKey = objectKey{tick: true}

// New returns a Core for rule, whose script declares handlers, that
// hands the actions of successful calls to sink.
func New(rule *rules.Rule, handlers Handlers, sink Sink, opts Options) *Core {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.BaseDelay == 0 {
		opts.BaseDelay = 200 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 30 * time.Second
	}
	if opts.Clock == nil {
		opts.Clock = clock.RealClock{}
	}
	base, maxDelay := opts.BaseDelay, opts.MaxDelay
	if base < 0 {
		base, maxDelay = 0, 0
	}
	has := func(t event.Type) bool { return reaches(rule, handlers, t) }
	d := &Core{
		rule:    rule,
		sink:    sink,
		opts:    opts,
		log:     opts.Logger.With("rule", rule.Name),
		clock:   opts.Clock,
		want:    wants{add: has(event.Add), update: has(event.Update), delete: has(event.Delete), timer: handlers.HasHandler(event.Timer)},
		tick:    rule.Ticks() && handlers.HasHandler(event.Tick),
		every:   rule.Delivery == rules.DeliverEvery,
		pending: map[objectKey]*entry{},
		ahead:   map[objectKey]uint64{},
		events:  map[objectKey]time.Time{},
		once:    onceMarks{marked: map[objectKey]types.UID{}},
	}
	d.needsWatch = NeedsWatch(rule, handlers)
	d.failures = newFailureLog(d.log, d.now)
	if rule.Finalizer {
		d.fin = newFinalizing(finalizers.Name(rule.Name))
	}
	for _, p := range rule.IgnoredPaths() {
		d.ignore = append(d.ignore, p.String())
	}
	if d.trace = newTrace(opts.Trace); d.trace != nil {
		d.unhandled = unhandledWhy(rule, handlers)
	}
	// kreact.once's marker, which kreact writes, calls nothing either.
	d.ignore = append(d.ignore, rules.FieldPath{"metadata", "annotations", event.OnceAnnotation(rule.Name)}.String())
	d.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[objectKey](base, maxDelay),
		workqueue.TypedRateLimitingQueueConfig[objectKey]{Name: "kreact_rule_changes_" + rule.Name, MetricsProvider: opts.MetricsProvider, Clock: opts.Clock},
	)
	if d.tick {
		d.ticks = tickSchedule(rule, d.log)
		if rule.TickScope != rules.TickReplica {
			d.schedules = opts.Schedules
		}
	}
	if d.ticks != nil {
		now := d.now()
		d.nextTick = d.ticks.next(time.Time{}, now)
		d.queue.AddAfter(tickKey, d.nextTick.Sub(now))
	}
	return d
}

// NeedsWatch reports whether the rule needs the informers of its
// spec.watch (the function NeedsWatch); without them no change reaches
// the Core.
func (d *Core) NeedsWatch() bool { return d.needsWatch }

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
	e := d.pending[key]
	if e == nil {
		e = &entry{resource: c.Resource}
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
	if e.empty() {
		delete(d.pending, key)
	} else {
		d.pending[key] = e
	}
	queue := e.hasChange()
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

// Run makes calls with each of callers, one worker goroutine per caller,
// until ctx ends. Then it stops taking objects, lets the calls under way
// finish, logs the repeated failures it has counted and not logged yet
// (repeated=N), and returns; the changes that were waiting are dropped
// (see the package doc). Run must be called once, and not together with Drain.
func (d *Core) Run(ctx context.Context, callers []Caller) {
	var wg sync.WaitGroup
	if d.fin != nil {
		wg.Go(func() { d.watchFinalizers(ctx) })
	}
	wg.Go(func() { d.flushFailures(ctx) })
	for _, c := range callers {
		wg.Go(func() {
			w := &worker{}
			s, ok := c.(Server)
			if !ok {
				for d.processNext(ctx, c, w, true) {
				}
				return
			}
			s.Serve(func() bool { return d.processNext(ctx, c, w, true) }, func(err error) {
				d.abandoned(ctx, w, err)
			})
		})
	}
	<-ctx.Done()
	d.stopping.Store(true)
	d.queue.ShutDown()
	wg.Wait()
	// The calls are over: the counts of failures not logged yet are final.
	d.failures.flushAll()
	if n := d.Len(); n > 0 {
		d.log.Info("stopped; changes of objects not handled yet are replayed as initial adds at the next start", "objects", n)
	}
}

// Drain makes the calls that wait, with caller, until none is left or ctx
// ends: retries included when BaseDelay is negative. It is for offline
// tests, in which one goroutine observes changes and drains in turn.
func (d *Core) Drain(ctx context.Context, caller Caller) {
	w := &worker{}
	for ctx.Err() == nil && d.queue.Len() > 0 {
		d.processNext(ctx, caller, w, false)
	}
}

// ShutDown releases the queue of a Core that was only drained.
func (d *Core) ShutDown() { d.queue.ShutDown() }

// processNext makes the next call waiting for one object. It returns
// false once the Core is stopping. With pace set, a worker whose call
// failed rests afterwards (see restFactor).
//
// The worker, and the object, stay busy until the actions of the call are
// finished (or ctx ends), like a controller whose reconcile includes its
// writes: a backlog then waits as changes, which coalesce, rather than as
// actions decided on a state that is stale by the time they are sent; and
// the next call of the object sees it after those writes.
func (d *Core) processNext(ctx context.Context, caller Caller, w *worker, pace bool) bool {
	key, shutdown := d.queue.Get()
	if shutdown {
		return false
	}
	if d.stopping.Load() {
		d.queue.Done(key)
		return false
	}
	t, ok := d.take(key)
	if !ok {
		d.queue.Forget(key)
		d.queue.Done(key)
		return true
	}
	w.begin(t)
	c := d.call(caller, t)
	if c.err == event.ErrAbandoned {
		// Settled by the Server's abandoned function (Run).
		return true
	}
	w.end()
	d.settle(ctx, t, c, pace)
	return true
}

// abandoned settles the turn of w whose call a Server abandoned with err,
// stuck in built-in code: as call and settle would have, had Invoke
// returned err.
func (d *Core) abandoned(ctx context.Context, w *worker, err error) {
	t, started, ok := w.turn()
	if !ok {
		return
	}
	c := called{called: true, took: time.Since(started), err: err}
	if d.traced() {
		c.at = d.now().Add(-c.took)
		c.retry = d.queue.NumRequeues(t.key)
	}
	if obs := d.opts.Observer; obs != nil {
		obs.HandlerCall(d.rule.Name, t.ev.Type, c.took, err)
	}
	if f := d.opts.Failures; f != nil && err != nil {
		f.CallFailed(d.rule.Name, err)
	}
	d.settle(ctx, t, c, true)
}

// worker holds the turn a worker's call is making, which a Server's
// abandoned function settles when the call is stuck (Run).
type worker struct {
	mu      sync.Mutex
	current turn
	started time.Time
	busy    bool
}

func (w *worker) begin(t turn) {
	w.mu.Lock()
	w.current, w.started, w.busy = t, time.Now(), true
	w.mu.Unlock()
}

func (w *worker) end() {
	w.mu.Lock()
	w.current, w.busy = turn{}, false
	w.mu.Unlock()
}

// turn takes the turn under way, if any, with when its call started.
func (w *worker) turn() (turn, time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	t, started, ok := w.current, w.started, w.busy
	w.current, w.busy = turn{}, false
	return t, started, ok
}

// A turn is one object's turn at a worker: the call that take made ready
// for it, and then what call did with it, which settle acts on, as
// controller-runtime's reconcileHandler acts on a reconcile's result.
type turn struct {
	key objectKey
	ev  event.Event
	// taken is what the call consumes of the object's entry, which a
	// failed call restores.
	taken Change
}

// called is what call did: whether it called the handler (a finalize
// whose rule has no onDelete only removes the finalizer), when, for how
// long and with which outcome, and at which retry.
type called struct {
	called bool
	at     time.Time // for the trace only
	took   time.Duration
	retry  int // for the trace only
	out    event.Outcome
	err    error
}

// take makes the next call of key ready, or reports that there is none:
// nothing is left of its entry, another replica makes this tick, or the
// newest state changes nothing the rule looks at.
func (d *Core) take(key objectKey) (turn, bool) {
	d.mu.Lock()
	ev, taken, ok := d.takeLocked(key)
	d.mu.Unlock()
	if ok && key.tick && d.schedules != nil && !d.schedules.OwnsSchedules() {
		// Another replica makes this tick (spec.tickScope cluster).
		ok = false
	}
	if !ok {
		return turn{}, false
	}
	if ev, ok = d.freshen(key, ev); !ok || d.ownFinalizerOnly(ev) {
		return turn{}, false
	}
	return turn{key: key, ev: d.withMarker(key, ev), taken: taken}, true
}

// call calls the rule's handler for t, unless t only finalizes an object
// for a rule without onDelete.
func (d *Core) call(caller Caller, t turn) called {
	var c called
	c.called = !t.taken.Finalize || d.want.delete
	if c.called {
		start := time.Now()
		if d.traced() {
			c.at = d.now()
		}
		c.out, c.err = caller.Invoke(t.ev)
		c.took = time.Since(start)
		if c.err == event.ErrAbandoned {
			// Observed when it was abandoned (Core.abandoned).
			return c
		}
		if obs := d.opts.Observer; obs != nil {
			obs.HandlerCall(d.rule.Name, t.ev.Type, c.took, c.err)
		}
		if f := d.opts.Failures; f != nil && c.err != nil {
			f.CallFailed(d.rule.Name, c.err)
		}
	}
	if d.traced() {
		c.retry = d.queue.NumRequeues(t.key)
	}
	return c
}

// settle acts on what call did: a finalize removes the finalizer once its
// actions are done, a call that succeeded arms its timer and commits its
// actions, and a failed one is retried or given up (failed).
func (d *Core) settle(ctx context.Context, t turn, c called, pace bool) {
	err := c.err
	finalizing := false
	if err == nil && t.taken.Finalize {
		if err = d.finish(ctx, t.key, t.ev, c.out.Actions); err == nil {
			d.traceTurn(t, c, nil, "ok; finalizer removed")
			d.queue.Forget(t.key)
			d.queue.Done(t.key)
			return
		}
		finalizing = true
	}
	if err != nil {
		d.failed(ctx, t, c, err, finalizing, pace)
		return
	}
	d.traceTurn(t, c, nil, "ok")
	d.queue.Forget(t.key)
	d.arm(t.key, t.ev, c.out.Timer)
	select {
	case <-d.commit(ctx, t.key, t.ev, c.out.Actions, c.out.Once):
	case <-ctx.Done():
		// The actions finish, and release the object, on their own.
	}
}

// failed settles a call that failed with err, or whose finalize failed
// (finalizing): it is made again later, on the latest state, unless it has
// used up its retries; a worker with pace set rests after it.
func (d *Core) failed(ctx context.Context, t turn, c called, err error, finalizing, pace bool) {
	key, ev := t.key, t.ev
	rest := RestAfter(err)
	defer func() {
		d.queue.Done(key)
		if pace && rest > 0 {
			lifecycle.Sleep(ctx, rest)
		}
	}()
	switch {
	case errors.Is(err, event.ErrClosed), errors.Is(err, errFinalizeStopped):
		d.traceTurn(t, c, err, "stopped; made again at the next start")
		d.restore(key, t.taken)
	case errors.Is(err, event.ErrStuck):
		// Not this change's fault: wait without using up a retry.
		d.traceTurn(t, c, err, "delayed: script workers stuck")
		d.restore(key, t.taken)
		d.failures.failed(slog.LevelWarn, "script workers stuck in built-in code; change delayed", err, callAttrs(ev, err, rest))
		d.queue.AddAfter(key, stuckDelay)
	case d.queue.NumRequeues(key) < d.rule.Retries:
		d.restore(key, t.taken)
		attempt := d.queue.NumRequeues(key) + 1
		msg := "script failed; the call will be retried on the latest state"
		if finalizing {
			msg = "onDelete's actions or the finalizer's removal failed; onDelete will be retried and the object keeps the finalizer meanwhile"
		}
		d.failures.failed(slog.LevelWarn, msg, err, append(callAttrs(ev, err, rest), "retry", attempt, "of", d.rule.Retries))
		d.traceTurn(t, c, err, fmt.Sprintf("failed; retry %d of %d to come", attempt, d.rule.Retries))
		d.queue.AddRateLimited(key)
	default:
		msg := "handler call given up"
		if finalizing || t.taken.Finalize {
			msg = "handler call given up; the object keeps the finalizer " + d.fin.name + " until the rule handles it (a restart retries it) or it is released (kreact finalizers release " + d.rule.Name + ")"
		}
		d.failures.failed(slog.LevelError, msg, err, append(callAttrs(ev, err, rest), "retries", d.queue.NumRequeues(key)))
		d.traceTurn(t, c, err, fmt.Sprintf("given up after %d retries", d.queue.NumRequeues(key)))
		if obs := d.opts.Observer; obs != nil {
			obs.HandlerGivenUp(d.rule.Name, ev.Type, err)
		}
		d.recordEvent(key, ev, ReasonGivenUp, givenUpMessage(d.rule.Name, ev, d.queue.NumRequeues(key), err))
		d.queue.Forget(key)
	}
}

// traceTurn records the call of t in the trace, with the result settle
// gave it; a turn that called nothing records nothing.
func (d *Core) traceTurn(t turn, c called, err error, result string) {
	if c.called && d.traced() {
		d.traceCall(t.key, t.ev, c.at, c.took, c.retry, err, result)
	}
}

// freshen replaces the object of an add or update (delivery "latest") by
// the newest state the cache holds of the same incarnation (same UID): the
// change that carries it is on its way, and calling with it spares a call,
// or an action that would be stale on arrival. Changes up to that state
// are then not delivered again (see seenAheadLocked). It returns false
// when the newest state changes nothing the rule looks at.
func (d *Core) freshen(key objectKey, ev event.Event) (event.Event, bool) {
	if d.opts.Cache == nil || key.tick {
		return ev, true
	}
	if ev.Type == event.Timer {
		// onTimer gets the latest state; its changes are delivered too.
		if newest, ok := d.opts.Cache.Get(key.source, key.namespace, key.name); ok && newest.GetUID() == ev.Object.GetUID() {
			ev.Object = newest
		}
		return ev, true
	}
	if d.every || (ev.Type != event.Add && ev.Type != event.Update) {
		return ev, true
	}
	newest, ok := d.opts.Cache.Newer(key.source, key.namespace, key.name, ev.Object.GetUID(), ev.Object.GetResourceVersion())
	if !ok {
		return ev, true
	}
	rv, parsed := resourceVersion(newest)
	if !parsed {
		return ev, true
	}
	d.mu.Lock()
	d.ahead[key] = rv
	d.mu.Unlock()
	ev.Object = newest
	if ev.Type == event.Update {
		ev.Changed = event.ChangedPaths(ev.OldObject.Object, newest.Object, d.ignore)
		if len(ev.Changed) == 0 && d.traced() {
			d.traceIgnored(key, Change{Type: event.Update, Old: ev.OldObject, Object: newest, Resource: ev.Resource})
		}
		return ev, len(ev.Changed) > 0
	}
	return ev, true
}

// commit hands the actions of a successful call to the sink, and
// releases key once they are all finished; the returned channel is closed
// then. With a once marker (kreact.once), the marker is sent after them,
// only if every one succeeded (otherwise the next call does it again),
// and key is released after it. The actions of every call are traced,
// and one that fails records its Event, with a marker or without.
//
// The last action is handed over with Execute, on the worker's goroutine,
// which waits for the actions anyway: the others, handed over first,
// proceed on the sink's workers meanwhile.
func (d *Core) commit(ctx context.Context, key objectKey, ev event.Event, asked []actions.Action, marker *actions.Action) <-chan struct{} {
	finished := make(chan struct{})
	release := func() {
		d.queue.Done(key)
		close(finished)
	}
	var failed atomic.Bool
	// all runs once every action is finished.
	all := func() {
		if marker == nil || failed.Load() {
			release()
			return
		}
		d.sink.EnqueueResult(*marker, func(err error) {
			if err == nil {
				d.markedOnce(key, marker.UID)
			}
			release()
		})
	}
	if len(asked) == 0 {
		all()
		return finished
	}
	var left atomic.Int32
	left.Store(int32(len(asked)))
	settled := func(error) {
		if left.Add(-1) == 0 {
			all()
		}
	}
	last := len(asked) - 1
	hand := func(i int, a actions.Action, done func(error)) {
		if i == last {
			d.sink.Execute(ctx, a, done)
		} else {
			d.sink.EnqueueResult(a, done)
		}
	}
	if !d.traced() && !d.rule.RecordEvents && marker == nil {
		// Nothing needs to know how each action ended.
		for i, a := range asked {
			hand(i, a, settled)
		}
		return finished
	}
	start := d.now()
	for i, a := range asked {
		var traced func(error)
		if d.traced() {
			traced = d.traceAction(key, ev.Resource.GVR.GroupResource(), a, start)
		}
		hand(i, a, func(err error) {
			if traced != nil {
				traced(err)
			}
			if err != nil {
				failed.Store(true)
				if a.Verb != actions.Event && !errors.Is(err, actions.ErrStopped) {
					d.recordEvent(key, ev, ReasonActionFailed, fmt.Sprintf("rule %s: %s %s failed: %v", d.rule.Name, a.Verb, actionTarget(a), err))
				}
			}
			settled(err)
		})
	}
	return finished
}

// takeLocked removes the next call of key from its entry. An entry with
// more to do queues its key again (the workqueue hands it out once this
// call is done).
func (d *Core) takeLocked(key objectKey) (event.Event, Change, bool) {
	now := d.now()
	if key.tick {
		d.scheduleTickLocked(now)
	}
	e := d.pending[key]
	if e == nil {
		return event.Event{}, Change{}, false
	}
	var ev event.Event
	var taken Change
	ok := false
	for !ok && e.hasCall(now) {
		switch {
		case !e.hasChange():
			ev, taken = e.timer.take(e.resource)
			ok = true
		case d.every && !key.tick:
			ev, taken, ok = e.takeEvery(d.ignore)
			d.queued--
		default:
			ev, taken, ok = e.take(d.ignore)
		}
		if !ok && taken.Type == event.Update && d.traced() {
			d.traceIgnored(key, taken)
		}
	}
	switch {
	case e.empty():
		delete(d.pending, key)
	case e.hasCall(now):
		d.queue.Add(key)
	case !e.timer.at.IsZero():
		// Woken before its timer, which a later kreact.after moved.
		d.queue.AddAfter(key, e.timer.at.Sub(now))
	}
	return ev, taken, ok
}

// restore puts back a call that failed, before the changes that arrived
// while it ran, so that its retry sees the object's latest state: an add
// stays an add, an update keeps the object the script last saw, and an add
// followed by a delete becomes nothing.
func (d *Core) restore(key objectKey, taken Change) {
	if taken.Type == event.Timer {
		d.retryTimer(key, taken)
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	later := d.pending[key]
	e := &entry{resource: taken.Resource}
	if later != nil {
		// The timer is the object's, not the change's: it stays as it is.
		e.timer = later.timer
	}
	if d.every && !key.tick {
		e.every = append(e.every, taken)
		d.queued++
		if later != nil {
			e.every = append(e.every, later.every...)
		}
	} else {
		e.merge(taken, wants{add: true, update: true, delete: true})
		if later != nil {
			for _, c := range later.replay() {
				e.merge(c, d.want)
			}
		}
	}
	if e.empty() {
		delete(d.pending, key)
		return
	}
	d.pending[key] = e
}

// callAttrs are the log attributes of a failed call: handler, resource,
// object, the script's position, message and stack, and the worker's rest
// when it is long enough to notice.
func callAttrs(ev event.Event, err error, rest time.Duration) []any {
	attrs := []any{"handler", ev.Type.Handler()}
	if rest >= restLogged {
		attrs = append(attrs, "rest", rest.Round(time.Millisecond).String())
	}
	if ev.Object != nil {
		attrs = append(attrs, "resource", ev.Resource.GVR.GroupResource().String(), "object", objectName(ev.Object))
	}
	var se *event.ScriptError
	if errors.As(err, &se) {
		attrs = append(attrs, "position", se.Position.String(), "error", se.Message)
		if se.Stack != "" {
			attrs = append(attrs, "stack", se.Stack)
		}
		return attrs
	}
	return append(attrs, "error", err)
}

func objectName(u *unstructured.Unstructured) string {
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}
