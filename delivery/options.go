package delivery

import (
	"log/slog"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"

	"github.com/kreact/kreact/event"
)

// What configures a Core (Options), and what it tells of its work: the
// Observer, for metrics; Failures, a control path; the ScheduleOwner,
// which says whether a once-per-cluster tick is made here.

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
