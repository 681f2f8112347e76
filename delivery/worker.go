package delivery

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/kreact/kreact/event"
)

// The worker loop: Run's workers, and Drain offline, take one object at a
// time from the queue and make its next call (processNext, take.go,
// call.go); a worker whose call failed rests (RestAfter). A call stuck
// in built-in code is settled from the Server's side (abandoned).

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
	// Run's own goroutine would only wait: it flushes the failure log
	// meanwhile, which spares each rule a goroutine of its own for it.
	d.flushFailures(ctx)
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
