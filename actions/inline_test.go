package actions_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/testcluster"
)

// webhook records the requests it is sent, in order, and how many it
// served at once. After holdNext it holds the next request until release.
type webhook struct {
	*httptest.Server

	mu              sync.Mutex
	got             []string
	running, most   int
	failFirst, seen int
	holdOne         bool
	held            chan struct{}
}

func newWebhook(t *testing.T) *webhook {
	w := &webhook{}
	w.Server = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.got = append(w.got, r.Header.Get("X-Name"))
		w.running++
		w.most = max(w.most, w.running)
		w.seen++
		fail := w.seen <= w.failFirst
		var hold chan struct{}
		if w.holdOne {
			w.holdOne, hold = false, w.held
		}
		w.mu.Unlock()
		if hold != nil {
			<-hold
		}
		w.mu.Lock()
		w.running--
		w.mu.Unlock()
		if fail {
			rw.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(w.Close)
	return w
}

// holdNext makes the webhook hold the next request until release.
func (w *webhook) holdNext() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.holdOne, w.held = true, make(chan struct{})
}

func (w *webhook) release() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.held)
}

func (w *webhook) requests() ([]string, int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.got), w.most
}

func (w *webhook) action(name string) actions.Action {
	return actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{
		Method: "POST", URL: w.URL, Headers: map[string]string{"X-Name": name},
	}}
}

// execute calls q.Execute and tells whether the action was finished when
// Execute returned, and then waits for it to finish.
func execute(t *testing.T, q *actions.Queue, a actions.Action) (inline bool, err error) {
	t.Helper()
	done := make(chan error, 1)
	q.Execute(t.Context(), a, func(err error) { done <- err })
	select {
	case err = <-done:
		return true, err
	default:
	}
	select {
	case err = <-done:
		return false, err
	case <-time.After(60 * time.Second):
		t.Fatal("action never finished")
		return false, nil
	}
}

// within receives from c, failing the test after a minute.
func within[T any](t *testing.T, c <-chan T) T {
	t.Helper()
	select {
	case v := <-c:
		return v
	case <-time.After(time.Minute):
		t.Fatal("nothing received within a minute")
		var zero T
		return zero
	}
}

// untilInline waits until q runs Execute's attempts on the caller's
// goroutine: Run starts taking actions in its own goroutine, and until
// then Execute queues.
func untilInline(t *testing.T, q *actions.Queue, w *webhook) {
	t.Helper()
	testcluster.Eventually(t, "an attempt on Execute's goroutine", func() bool {
		inline, err := execute(t, q, w.action("warm-up"))
		if err != nil {
			t.Fatal(err)
		}
		return inline
	})
}

// TestExecuteAttemptsOnTheCallersGoroutine: an action on a free target is
// finished when Execute returns, and reported like a worker's attempt.
func TestExecuteAttemptsOnTheCallersGoroutine(t *testing.T) {
	w := newWebhook(t)
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "execute", RateLimit: -1})
	untilInline(t, q, w)
	before := res.count(actions.Succeeded)
	inline, err := execute(t, q, w.action("second"))
	if !inline || err != nil {
		t.Fatalf("second action: inline %v, error %v; want it finished on Execute's goroutine", inline, err)
	}
	if got, _ := w.requests(); got[len(got)-1] != "second" {
		t.Errorf("requests %v, want the last to be second", got)
	}
	if n := res.count(actions.Succeeded) - before; n != 1 {
		t.Errorf("%d more results Succeeded, want the inline attempt reported once", n)
	}
}

// TestExecuteKeepsTheRateLimit: Execute attempts at once only what the
// rate limit lets go now; the rest waits for a worker, which waits for the
// limit.
func TestExecuteKeepsTheRateLimit(t *testing.T) {
	w := newWebhook(t)
	q, _, _ := startWebhookQueue(t, actions.Options{Name: "limited", RateLimit: 0.001, Burst: 1})
	inline := 0
	for range 5 {
		done := make(chan error, 1)
		q.Execute(t.Context(), w.action("limited"), func(err error) { done <- err })
		select {
		case <-done:
			inline++
		default:
		}
	}
	if inline > 1 {
		t.Errorf("%d of 5 actions finished on Execute's goroutine, want at most the burst of 1", inline)
	}
	if got, _ := w.requests(); len(got) > 1 {
		t.Errorf("%d requests sent, want at most the burst of 1", len(got))
	}
}

// TestExecuteWaitsBehindActionsOnItsTarget: Execute does not overtake an
// action that waits on, or is under way on, the same target; and an action
// enqueued behind an Execute attempt waits for it. Actions on one target
// run one at a time, in order, however they came.
func TestExecuteWaitsBehindActionsOnItsTarget(t *testing.T) {
	t.Run("behind the queue", func(t *testing.T) {
		w := newWebhook(t)
		q, _, _ := startWebhookQueue(t, actions.Options{Name: "behind", RateLimit: -1})
		untilInline(t, q, w)
		w.holdNext()

		queued := make(chan error, 1)
		q.EnqueueResult(w.action("a"), func(err error) { queued <- err })
		testcluster.Eventually(t, "the webhook to hold a", func() bool {
			got, _ := w.requests()
			return slices.Contains(got, "a")
		})
		// Execute is called before a is released: had it overtaken a, it
		// would return with b finished (b is not held).
		done := make(chan error, 1)
		q.Execute(t.Context(), w.action("b"), func(err error) { done <- err })
		select {
		case <-done:
			t.Error("b was finished on Execute's goroutine while a was under way on its target")
		default:
		}
		w.release()
		for _, c := range []chan error{queued, done} {
			if err := within(t, c); err != nil {
				t.Fatal(err)
			}
		}
		if got, most := w.requests(); !slices.Equal(got[len(got)-2:], []string{"a", "b"}) || most != 1 {
			t.Errorf("requests %v with at most %d at once, want a then b, one at a time", got, most)
		}
	})

	t.Run("behind Execute", func(t *testing.T) {
		w := newWebhook(t)
		q, _, _ := startWebhookQueue(t, actions.Options{Name: "behind-execute", RateLimit: -1})
		untilInline(t, q, w)
		w.holdNext()

		done := make(chan bool, 1)
		go func() {
			inline, err := execute(t, q, w.action("a"))
			if err != nil {
				t.Error(err)
			}
			done <- inline
		}()
		testcluster.Eventually(t, "the webhook to hold a", func() bool {
			got, _ := w.requests()
			return slices.Contains(got, "a")
		})
		queued := make(chan error, 1)
		q.EnqueueResult(w.action("b"), func(err error) { queued <- err })
		// Give a worker the chance to send b too early.
		time.Sleep(50 * time.Millisecond)
		w.release()
		if !within(t, done) {
			t.Error("a was not attempted on Execute's goroutine")
		}
		if err := within(t, queued); err != nil {
			t.Fatal(err)
		}
		if got, most := w.requests(); !slices.Equal(got[len(got)-2:], []string{"a", "b"}) || most != 1 {
			t.Errorf("requests %v with at most %d at once, want a then b, one at a time", got, most)
		}
	})
}

// TestExecuteHandsARetryToTheWorkers: an attempt on the caller's goroutine
// that fails in a way worth retrying is retried by a worker, within the
// retry budget, and its caller is told once, when it succeeds.
func TestExecuteHandsARetryToTheWorkers(t *testing.T) {
	w := newWebhook(t)
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "retry", RateLimit: -1, Retries: 3})
	untilInline(t, q, w)
	w.mu.Lock()
	w.failFirst = w.seen + 1
	w.mu.Unlock()
	var calls atomic.Int32
	done := make(chan error, 2)
	q.Execute(t.Context(), w.action("flaky"), func(err error) { calls.Add(1); done <- err })
	if err := within(t, done); err != nil {
		t.Fatalf("flaky action: %v, want it to succeed on its retry", err)
	}
	if got, _ := w.requests(); !slices.Equal(got[len(got)-2:], []string{"flaky", "flaky"}) {
		t.Errorf("requests %v, want flaky twice", got)
	}
	if n := res.count(actions.Retrying); n != 1 {
		t.Errorf("%d results Retrying, want 1", n)
	}
	if calls.Load() != 1 {
		t.Errorf("done called %d times, want once", calls.Load())
	}
}

// TestExecuteHandsOverWhenItsCallerStops: an attempt cut short because the
// caller's context ended is made again by a worker, without using up a
// retry, and its caller is told once.
func TestExecuteHandsOverWhenItsCallerStops(t *testing.T) {
	w := newWebhook(t)
	q, res, _ := startWebhookQueue(t, actions.Options{Name: "handover", RateLimit: -1, Retries: -1})
	untilInline(t, q, w)
	w.holdNext()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 2)
	go func() {
		testcluster.Eventually(t, "the webhook to hold the action", func() bool {
			got, _ := w.requests()
			return got[len(got)-1] == "cut"
		})
		cancel()
	}()
	q.Execute(ctx, w.action("cut"), func(err error) { done <- err })
	if err := within(t, done); err != nil {
		t.Fatalf("action: %v, want a worker to make it again (no retry is allowed, so it did not count)", err)
	}
	w.release()
	if got, _ := w.requests(); !slices.Equal(got[len(got)-2:], []string{"cut", "cut"}) {
		t.Errorf("requests %v, want cut twice", got)
	}
	if n := res.count(actions.Retrying) + res.count(actions.GaveUp) + res.count(actions.Failed); n != 0 {
		t.Errorf("%d attempts counted as failed, want none", n)
	}
}
