package actions

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/queueclock"
	"golang.org/x/time/rate"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/workqueue"
)

// Options configure a Queue. The zero value is usable.
type Options struct {
	// Name names the queue in logs and workqueue metrics, usually the rule's
	// name. Empty means "actions".
	Name string
	// Workers is how many actions run at once, at most. Zero means 1.
	// The workers are goroutines started as actions wait and stopped
	// when none do: an idle queue holds one.
	Workers int
	// Retries is how many times a failed action is retried before it is
	// given up, an unreachable or failing webhook included (an unreachable
	// API server does not count). Zero means 5; negative means never retry.
	Retries int
	// RateLimit is the number of actions per second the queue executes.
	// Zero means 10; negative means unlimited.
	RateLimit float64
	// Burst is how many actions may run at once above RateLimit. Zero
	// means twice RateLimit (at least 1).
	Burst int
	// BaseDelay and MaxDelay bound the exponential backoff between retries.
	// Zero means 100ms and 30s.
	BaseDelay, MaxDelay time.Duration
	// DryRun executes every action as a dry run, whatever the action says.
	DryRun bool
	// DrainTimeout bounds how long Run waits, once its context ends, for
	// queued actions to finish. Zero means 10s.
	DrainTimeout time.Duration
	// Logger receives a line per action executed, retried or failed. Nil
	// means slog.Default().
	Logger *slog.Logger
	// HTTPClient sends HTTP actions. Nil means a client with a 10s timeout.
	// Its timeout bounds each attempt: a client without one lets a webhook
	// that never answers hold a worker until the queue stops.
	// Its CheckRedirect is replaced by the queue's: see AllowURL.
	HTTPClient *http.Client
	// AllowURL checks every redirect an HTTP action's target answers with
	// (the rule's spec.http, rules.Rule.AllowsHTTP): a redirect is followed
	// only when AllowURL returns nil for its target and, for a 307 or 308,
	// which re-send the body, only within the origin (scheme, host and
	// port) of the request. Any other redirect fails the action for good,
	// and nothing is sent to its target. Nil refuses every redirect.
	AllowURL func(rawURL string) error
	// MetricsProvider receives the workqueue's metrics. Nil means client-go's
	// global provider (which does nothing unless one is registered).
	MetricsProvider workqueue.MetricsProvider
	// ActingAs, if set, is the user that client impersonates (a team's
	// Rule acts as a ServiceAccount of its namespace): the error of every
	// API request the queue makes names it ("patch deployments.apps
	// team-a/web as system:serviceaccount:team-a:deployer: ..."), so that
	// a refused action says whose rights refused it. Empty means kreact
	// itself, and names none.
	ActingAs string
	// OnResult, if set, is called after every attempt, from the goroutine
	// that made it (a worker's, or Execute's caller's). It must not block.
	OnResult func(Result)
}

// Outcome says how one attempt at an action ended.
type Outcome string

// The outcomes of an attempt.
const (
	Succeeded Outcome = "succeeded"
	Retrying  Outcome = "retrying" // failed, will be tried again
	Failed    Outcome = "failed"   // refused for good (API server, or a webhook's 4xx)
	GaveUp    Outcome = "gave-up"  // retries exhausted (also a webhook that stayed down)
	Waiting   Outcome = "waiting"  // API server unreachable; will retry, never for HTTP actions
)

// Result reports one attempt at an action.
type Result struct {
	Action  Action
	Outcome Outcome
	Err     error
}

// Stats counts what a Queue did. Counters only grow.
type Stats struct {
	Succeeded, Retried, Failed, GaveUp int64
}

// Queue executes the actions of one rule. Enqueue may be called from any
// goroutine; Run must be called once.
type Queue struct {
	opts    Options
	client  rest.Interface
	log     *slog.Logger
	queue   workqueue.TypedRateLimitingInterface[targetKey]
	limiter *rate.Limiter

	mu      sync.Mutex
	pending map[targetKey][]queued
	seq     uint64
	// workCtx is the workers' context while Run takes actions, nil
	// before and after: Execute attempts only meanwhile.
	workCtx context.Context
	// inline holds the targets whose head action Execute is attempting
	// on its caller's goroutine: the workqueue does not hold them, and
	// an action enqueued behind one waits for Execute to hand it over.
	inline map[targetKey]struct{}
	// executing counts Execute's attempts under way, which Run waits
	// for before it drops what is left.
	executing sync.WaitGroup
	// adds, latency and work count Execute's attempts in the workqueue's
	// metrics, as items that waited for nothing.
	adds          workqueue.CounterMetric
	latency, work workqueue.HistogramMetric

	// reconnect spaces the attempts of actions that wait for an API server
	// that cannot be reached: apart from the queue's own backoff, so that
	// an outage uses up no retry, and capped at a second, so that the
	// actions go out soon after the server is back.
	reconnect workqueue.TypedRateLimiter[targetKey]
	// unreachableLog rate-limits the line about actions waiting for the
	// API server: during an outage every waiting action fails every second.
	unreachableLog rate.Sometimes

	// workersMu guards running, the workers started and not stopped, and
	// idle, those of them waiting in the workqueue's Get (see worker).
	workersMu     sync.Mutex
	running, idle int

	succeeded, retried, failed, gaveUp atomic.Int64
}

// reconnectMax caps the wait between attempts of an action while the API
// server cannot be reached.
const reconnectMax = time.Second

// NewQueue returns a Queue that executes actions with client, a REST client
// for the cluster's API paths such as kube.RESTClient returns (the client
// client-go's dynamic client is built on). client may be nil for a queue
// that only sends HTTP actions.
func NewQueue(client rest.Interface, opts Options) *Queue {
	if opts.Name == "" {
		opts.Name = "actions"
	}
	if opts.Workers <= 0 {
		opts.Workers = 1
	}
	if opts.Retries == 0 {
		opts.Retries = 5
	}
	if opts.RateLimit == 0 {
		opts.RateLimit = 10
	}
	if opts.Burst <= 0 {
		opts.Burst = max(1, int(2*opts.RateLimit))
	}
	if opts.BaseDelay <= 0 {
		opts.BaseDelay = 100 * time.Millisecond
	}
	if opts.MaxDelay <= 0 {
		opts.MaxDelay = 30 * time.Second
	}
	if opts.DrainTimeout <= 0 {
		opts.DrainTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{Timeout: 10 * time.Second}
	}
	// A copy: the caller's client may be shared with other queues.
	httpClient := *opts.HTTPClient
	httpClient.CheckRedirect = checkRedirect(opts.AllowURL)
	opts.HTTPClient = &httpClient
	limit := rate.Limit(opts.RateLimit)
	if opts.RateLimit < 0 {
		limit = rate.Inf
	}
	q := &Queue{
		opts:    opts,
		client:  client,
		log:     opts.Logger,
		limiter: rate.NewLimiter(limit, opts.Burst),
		pending: map[targetKey][]queued{},
		inline:  map[targetKey]struct{}{},

		reconnect:      workqueue.NewTypedItemExponentialFailureRateLimiter[targetKey](opts.BaseDelay, reconnectMax),
		unreachableLog: rate.Sometimes{First: 1, Interval: 10 * time.Second},
	}
	q.queue = workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[targetKey](opts.BaseDelay, opts.MaxDelay),
		workqueue.TypedRateLimitingQueueConfig[targetKey]{Name: opts.Name, MetricsProvider: opts.MetricsProvider, Clock: queueclock.Slow(nil)},
	)
	q.adds, q.latency, q.work = noMetric{}, noMetric{}, noMetric{}
	if m := opts.MetricsProvider; m != nil {
		q.adds, q.latency, q.work = m.NewAddsMetric(opts.Name), m.NewLatencyMetric(opts.Name), m.NewWorkDurationMetric(opts.Name)
	}
	return q
}

// noMetric counts nothing, for a queue without a MetricsProvider (whose
// workqueue reports to client-go's global provider, which does nothing
// unless one is registered).
type noMetric struct{}

func (noMetric) Inc()            {}
func (noMetric) Observe(float64) {}

// queued is an action waiting on its target, and what to call when it is
// finished.
type queued struct {
	action Action
	done   func()
	result func(error)
}

// ErrStopped is the result of an action dropped because its queue stopped.
var ErrStopped = errors.New("action dropped: the queue stopped")

// Enqueue adds an action behind the other actions on the same object. It
// never blocks. Actions enqueued after Run has returned are dropped with a
// log line.
func (q *Queue) Enqueue(a Action) { q.EnqueueThen(a, nil) }

// EnqueueThen is Enqueue, and calls done, if not nil, once the action is
// finished: executed, refused, given up, or dropped because the queue
// stopped. done is called exactly once, from a worker goroutine or from
// the caller's when the action is dropped at once; it must not block.
func (q *Queue) EnqueueThen(a Action, done func()) {
	q.enqueue(queued{action: a, done: done})
}

// EnqueueResult is EnqueueThen, telling done how the action ended: nil
// when it succeeded (or was done already: creating what exists, deleting
// what is gone), else the error of its last attempt, or ErrStopped.
func (q *Queue) EnqueueResult(a Action, done func(error)) {
	q.enqueue(queued{action: a, result: done})
}

func (q *Queue) enqueue(w queued) {
	if q.queue.ShuttingDown() {
		q.log.Warn("action dropped: queue is shut down", actionAttrs(w.action)...)
		w.finish(ErrStopped)
		return
	}
	q.mu.Lock()
	q.seq++
	key := keyOf(w.action, q.seq)
	q.pending[key] = append(q.pending[key], w)
	_, behindExecute := q.inline[key]
	q.mu.Unlock()
	if !behindExecute {
		q.queue.Add(key)
	}
}

// Execute is EnqueueResult for a caller that waits for the action anyway,
// as the delivery of a call waits for its actions: when no other action
// waits on its target and the rate limit lets one go now, its first
// attempt is made on the calling goroutine, which spares the hand-over to
// a worker goroutine and back (two thread wake-ups, at low rates a
// reaction's largest cost after the script). Otherwise, and for its
// retries, it is queued as EnqueueResult queues it, in the same order
// behind the actions on its target. done is called exactly once, as for
// EnqueueResult, often before Execute returns.
//
// ctx bounds the caller's wait, not the action: an attempt that fails
// because ctx ended is handed to the workers, uncounted, as if queued.
func (q *Queue) Execute(ctx context.Context, a Action, done func(error)) {
	w := queued{action: a, result: done}
	q.mu.Lock()
	workCtx := q.workCtx
	q.seq++
	key := keyOf(a, q.seq)
	_, behindExecute := q.inline[key]
	if workCtx == nil || ctx.Err() != nil || len(q.pending[key]) > 0 || behindExecute || !q.limiter.Allow() {
		q.mu.Unlock()
		q.enqueue(w)
		return
	}
	q.pending[key] = []queued{w}
	q.inline[key] = struct{}{}
	q.executing.Add(1)
	q.mu.Unlock()
	defer q.executing.Done()
	q.adds.Inc()
	q.latency.Observe(0)
	start := time.Now()
	a = q.dryRun(a)
	err := q.execute(ctx, a)
	if err != nil && ctx.Err() != nil {
		q.handBack(key)
		q.queue.Add(key)
	} else {
		q.settle(workCtx, key, a, err)
	}
	q.work.Observe(time.Since(start).Seconds())
}

// finish tells the action's caller that it is finished, with err.
func (w queued) finish(err error) {
	if w.done != nil {
		w.done()
	}
	if w.result != nil {
		w.result(err)
	}
}

// Len returns how many actions wait to be executed.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := 0
	for _, waiting := range q.pending {
		n += len(waiting)
	}
	return n
}

// Stats returns the queue's counters.
func (q *Queue) Stats() Stats {
	return Stats{
		Succeeded: q.succeeded.Load(),
		Retried:   q.retried.Load(),
		Failed:    q.failed.Load(),
		GaveUp:    q.gaveUp.Load(),
	}
}

// Run executes actions until ctx ends, then stops taking new ones, lets the
// queued ones finish for up to Options.DrainTimeout and returns.
func (q *Queue) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	// Workers use their own context so that draining can still execute.
	workCtx, cancelWork := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelWork()
	q.mu.Lock()
	q.workCtx = workCtx
	q.mu.Unlock()
	q.workersMu.Lock()
	q.running, q.idle = 1, 1
	q.workersMu.Unlock()
	wg.Go(func() { q.worker(workCtx, &wg) })
	<-ctx.Done()
	q.mu.Lock()
	q.workCtx = nil
	q.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		q.queue.ShutDownWithDrain()
		close(drained)
	}()
	select {
	case <-drained:
	case <-time.After(q.opts.DrainTimeout):
		cancelWork()
	}
	// ShutDownWithDrain alone leaves the delaying queue's loop running
	// (client-go's delayingType does not override it); ShutDown ends it.
	q.queue.ShutDown()
	wg.Wait()
	q.executing.Wait()
	q.mu.Lock()
	left := q.pending
	q.pending = map[targetKey][]queued{}
	q.mu.Unlock()
	n := 0
	for _, waiting := range left {
		for _, w := range waiting {
			n++
			w.finish(ErrStopped)
		}
	}
	if n > 0 {
		q.log.Warn("stopped with actions not executed", "queue", q.opts.Name, "count", n)
	}
	return nil
}

// worker takes keys from the workqueue until it shuts down. Workers are
// started as they are needed, up to Options.Workers, so that an idle rule
// holds one goroutine rather than Workers (each a stack, and a wake-up
// for the scheduler): whenever fewer than Workers run, at least one of
// them waits in Get, so that an action added at any time, by any path
// (Enqueue, or the workqueue's own delayed adds of retries), is taken at
// once, as it would be with all of them started; a worker that finds
// nothing queued and another one waiting stops. wg counts the workers.
func (q *Queue) worker(ctx context.Context, wg *sync.WaitGroup) {
	for {
		key, shutdown := q.queue.Get()
		q.workersMu.Lock()
		q.idle--
		if shutdown {
			q.running--
			q.workersMu.Unlock()
			return
		}
		if q.idle == 0 && q.running < q.opts.Workers {
			// The caller's count includes this worker, so the
			// WaitGroup is not at zero: Go may be called while Run
			// waits.
			q.running++
			q.idle++
			wg.Go(func() { q.worker(ctx, wg) })
		}
		q.workersMu.Unlock()
		q.processNext(ctx, key)
		q.workersMu.Lock()
		if q.idle > 0 && q.queue.Len() == 0 {
			q.running--
			q.workersMu.Unlock()
			return
		}
		q.idle++
		q.workersMu.Unlock()
	}
}

// processNext executes the oldest action on key, which a worker took from
// the workqueue.
func (q *Queue) processNext(ctx context.Context, key targetKey) {
	defer q.queue.Done(key)

	q.mu.Lock()
	waiting := q.pending[key]
	q.mu.Unlock()
	if len(waiting) == 0 {
		q.queue.Forget(key)
		return
	}
	if err := q.limiter.Wait(ctx); err != nil {
		q.queue.AddRateLimited(key)
		return
	}
	a := q.dryRun(waiting[0].action)
	q.settle(ctx, key, a, q.execute(ctx, a))
}

// dryRun returns a as the queue executes it.
func (q *Queue) dryRun(a Action) Action {
	if q.opts.DryRun {
		a.DryRun = true
	}
	return a
}

// settle acts on the attempt at a, the head action of key, that ended with
// err: it pops a when it is finished, or queues key again for its next
// attempt. ctx is the workers' context.
func (q *Queue) settle(ctx context.Context, key targetKey, a Action, err error) {
	switch class := classify(err); {
	case class == done:
		q.succeeded.Add(1)
		q.report(a, Succeeded, nil)
		q.pop(key, nil)
	case class == apiServerUnreachable && ctx.Err() == nil:
		// Not the action's fault: wait for the server without using up
		// retries. The per-item backoff still grows, up to MaxDelay.
		q.report(a, Waiting, err)
		q.unreachableLog.Do(func() {
			q.log.Warn("API server unavailable; actions wait for it (logged at most every 10s)", append(actionAttrs(a), "error", err)...)
		})
		q.handBack(key)
		q.queue.AddAfter(key, q.reconnect.When(key))
	case class == webhookDown && q.queue.NumRequeues(key) < q.opts.Retries:
		// Unlike the API server, a webhook that is down may stay down:
		// retry within the rule's budget, then give up (below).
		q.retried.Add(1)
		q.report(a, Retrying, err)
		q.log.Warn(webhookProblem(err)+"; action will be retried",
			append(actionAttrs(a), "attempt", q.queue.NumRequeues(key)+1, "retries", q.opts.Retries, "error", err)...)
		q.handBack(key)
		q.queue.AddRateLimited(key)
	case class == retriable && q.queue.NumRequeues(key) < q.opts.Retries:
		q.retried.Add(1)
		q.report(a, Retrying, err)
		q.log.Info("action failed; retrying", append(actionAttrs(a), "attempt", q.queue.NumRequeues(key)+1, "error", err)...)
		q.handBack(key)
		q.queue.AddRateLimited(key)
	case class == permanent:
		q.failed.Add(1)
		q.report(a, Failed, err)
		if a.Guarded && (apierrors.IsInvalid(err) || apierrors.IsConflict(err)) {
			q.log.Info("kreact's own patch found the object changed meanwhile (another client wrote it first); kreact makes it again from a newer state", append(actionAttrs(a), "error", err)...)
		} else {
			q.log.Error("action refused", append(actionAttrs(a), "error", err)...)
		}
		q.pop(key, err)
	default:
		msg := "action gave up after retries"
		if class == webhookDown {
			msg = webhookProblem(err) + "; action gave up after retries"
		}
		q.gaveUp.Add(1)
		q.report(a, GaveUp, err)
		q.log.Error(msg, append(actionAttrs(a), "retries", q.queue.NumRequeues(key), "error", err)...)
		q.pop(key, err)
	}
}

// handBack gives key back to the workqueue, whose worker makes the next
// attempt at its head action; after an attempt by Execute, actions
// enqueued behind it meanwhile may be queued again from then on.
func (q *Queue) handBack(key targetKey) {
	q.mu.Lock()
	delete(q.inline, key)
	q.mu.Unlock()
}

// pop removes the head action of key, tells its caller it is finished
// (with err), and requeues the key if more wait.
func (q *Queue) pop(key targetKey, err error) {
	q.queue.Forget(key)
	q.reconnect.Forget(key)
	q.mu.Lock()
	delete(q.inline, key)
	waiting := q.pending[key]
	var head queued
	if len(waiting) > 0 {
		head = waiting[0]
		waiting = waiting[1:]
	}
	if len(waiting) == 0 {
		delete(q.pending, key)
	} else {
		q.pending[key] = waiting
	}
	q.mu.Unlock()
	head.finish(err)
	if len(waiting) > 0 {
		q.queue.Add(key)
	}
}

func (q *Queue) report(a Action, o Outcome, err error) {
	if q.opts.OnResult != nil {
		q.opts.OnResult(Result{Action: a, Outcome: o, Err: err})
	}
}

// targetKey identifies the object an action is about; actions with the same
// key run in order.
type targetKey struct {
	group, resource, namespace, name string
}

func keyOf(a Action, seq uint64) targetKey {
	switch {
	case a.Verb == HTTP && a.Request != nil:
		return targetKey{resource: "http", name: a.Request.URL}
	case a.Name == "":
		// A create with generateName has no identity yet: nothing to order
		// it against.
		return targetKey{group: a.Resource.Group, resource: a.Resource.Resource, namespace: a.Namespace, name: fmt.Sprintf("#%d", seq)}
	default:
		return targetKey{group: a.Resource.Group, resource: a.Resource.Resource, namespace: a.Namespace, name: a.Name}
	}
}

// actionAttrs are the log attributes naming an action and its target.
func actionAttrs(a Action) []any {
	attrs := []any{"rule", a.Rule, "verb", string(a.Verb)}
	if a.Verb == HTTP && a.Request != nil {
		return append(attrs, "url", a.Request.URL)
	}
	attrs = append(attrs, "resource", a.Resource.GroupResource().String())
	if a.Namespace != "" {
		attrs = append(attrs, "namespace", a.Namespace)
	}
	if a.Name != "" {
		attrs = append(attrs, "name", a.Name)
	}
	if a.Origin != (diag.Position{}) {
		attrs = append(attrs, "origin", a.Origin.String())
	}
	if a.DryRun {
		attrs = append(attrs, "dryRun", true)
	}
	return attrs
}
