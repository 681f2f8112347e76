package delivery

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/internal/queueclock"
	"github.com/kreact/kreact/rules"
)

// A Core, and what it is given: the rule, the Caller that runs its
// handlers, the Sink of their actions, the Cache of their objects (the
// Options and the hooks it tells are in options.go). The package doc's
// last section says which file holds each step of a change's way.

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
	// spare holds entries that take emptied, for the next objects'
	// changes (newEntryLocked): at low rates every change would
	// otherwise allocate one.
	spare []*entry
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
	// client-go's queues as NewTypedRateLimitingQueueWithConfig builds
	// them, but on a ring (fifo).
	queueName, queueClock := "kreact_rule_changes_"+rule.Name, queueclock.Slow(opts.Clock)
	d.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[objectKey](base, maxDelay),
		workqueue.TypedRateLimitingQueueConfig[objectKey]{
			Name: queueName, MetricsProvider: opts.MetricsProvider, Clock: queueClock,
			DelayingQueue: workqueue.NewTypedDelayingQueueWithConfig(workqueue.TypedDelayingQueueConfig[objectKey]{
				Name: queueName, MetricsProvider: opts.MetricsProvider, Clock: queueClock,
				Queue: workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[objectKey]{
					Name: queueName, MetricsProvider: opts.MetricsProvider, Clock: queueClock, Queue: &fifo[objectKey]{},
				}),
			}),
		},
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
