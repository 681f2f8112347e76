package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/lifecycle"
)

// Making a call and settling it: call calls the handler; settle commits
// the actions of a call that succeeded (commit), finishes a finalize
// (finalize.go), and retries or gives up a call that failed (failed).

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

// stuckDelay is how long a change waits when every runtime of its worker
// is stuck in built-in code (event.ErrStuck); it is not a retry.
const stuckDelay = time.Second

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
	if len(asked) == 0 && marker == nil {
		d.queue.Done(key)
		return closedChan
	}
	// One commitment holds what the callbacks share, so that a call's
	// actions cost one allocation here, not one per closure and per
	// shared variable (at 40 writes/s each is paid on cold caches).
	c := &commitment{d: d, key: key, marker: marker}
	if len(asked) == 0 {
		c.all()
		return c.finishedChan()
	}
	c.left.Store(int32(len(asked)))
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
		settled := c.settled
		for i, a := range asked[:last] {
			hand(i, a, settled)
		}
		// The last action's first attempt is usually made, and finished,
		// on this goroutine (Sink.Execute): then nothing waits, and no
		// channel is needed.
		hand(last, asked[last], settled)
		return c.finishedChan()
	}
	d.commitEach(ctx, c, ev, asked, hand)
	return c.finishedChan()
}

// commitEach hands asked over for commit when something needs to know
// how each action ended: the trace, spec.recordEvents or a once marker.
// It is apart from commit because its callbacks keep ev, which would
// otherwise be moved to the heap for every call.
func (d *Core) commitEach(ctx context.Context, c *commitment, ev event.Event, asked []actions.Action, hand func(int, actions.Action, func(error))) {
	key := c.key
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
				c.failed.Store(true)
				if a.Verb != actions.Event && !errors.Is(err, actions.ErrStopped) {
					d.recordEvent(key, ev, ReasonActionFailed, fmt.Sprintf("rule %s: %s %s failed: %v", d.rule.Name, a.Verb, actionTarget(a), err))
				}
			}
			c.settled(err)
		})
	}
}

// closedChan is what commit returns when its key is already released.
var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// commitment is one commit's state, shared by the callbacks of its
// actions.
type commitment struct {
	d      *Core
	key    objectKey
	marker *actions.Action
	failed atomic.Bool
	left   atomic.Int32

	mu       sync.Mutex
	finished chan struct{}
	released bool
}

// settled is the done of each action: the last one to finish calls all.
func (c *commitment) settled(error) {
	if c.left.Add(-1) == 0 {
		c.all()
	}
}

// all runs once every action is finished: it sends the once marker, if
// there is one and every action succeeded, then releases the key.
func (c *commitment) all() {
	if c.marker == nil || c.failed.Load() {
		c.release()
		return
	}
	c.d.sink.EnqueueResult(*c.marker, func(err error) {
		if err == nil {
			c.d.markedOnce(c.key, c.marker.UID)
		}
		c.release()
	})
}

// release frees the key, and closes the channel commit returned.
func (c *commitment) release() {
	c.d.queue.Done(c.key)
	c.mu.Lock()
	c.released = true
	if c.finished != nil {
		close(c.finished)
	}
	c.mu.Unlock()
}

// finishedChan returns the channel that is closed on release:
// closedChan if that has happened, else one made now, which release
// closes.
func (c *commitment) finishedChan() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.released {
		return closedChan
	}
	if c.finished == nil {
		c.finished = make(chan struct{})
	}
	return c.finished
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
