package scripting

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
)

// serveAll serves r with a step that makes the calls of events, one per
// step, recording what each returned, until they are all made; it returns
// the results and the errors given to abandoned.
func serveAll(r *Runtime, events []event.Event) (results []error, abandoned []error) {
	var mu sync.Mutex
	next := 0
	r.Serve(func() bool {
		mu.Lock()
		if next == len(events) {
			mu.Unlock()
			return false
		}
		ev := events[next]
		next++
		mu.Unlock()
		_, err := r.Invoke(ev)
		mu.Lock()
		results = append(results, err)
		mu.Unlock()
		return true
	}, func(err error) {
		mu.Lock()
		abandoned = append(abandoned, err)
		mu.Unlock()
	})
	mu.Lock()
	defer mu.Unlock()
	return results, abandoned
}

// TestServeMakesCallsOnItsGoroutine: calls made from Serve's step run on
// its goroutine (no worker goroutine is started for them), in order, with
// the script's state kept from call to call; a call interrupted at its
// timeout fails as it does from any goroutine, and the next gets a new
// runtime.
func TestServeMakesCallsOnItsGoroutine(t *testing.T) {
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", countingScript, h, RuntimeOptions{Timeout: 50 * time.Millisecond})
	loop := event.Event{Type: event.Add, Object: deployment("default", "loop", 1), Resource: deployments}
	results, abandoned := serveAll(r, []event.Event{addEvent, addEvent, loop, addEvent})
	if len(abandoned) != 0 {
		t.Errorf("abandoned %v, want nothing abandoned", abandoned)
	}
	var se *event.ScriptError
	if len(results) != 4 || results[0] != nil || results[1] != nil || !errors.As(results[2], &se) || !se.Timeout || results[3] != nil {
		t.Fatalf("results %v, want nil, nil, a timeout, nil", results)
	}
	if got, want := strings.Join(h.messages(), ","), "calls=1,calls=2,calls=3,calls=1"; got != want {
		t.Errorf("logs = %s, want %s", got, want)
	}
	r.worker.mu.Lock()
	started := r.worker.jobs != nil
	r.worker.mu.Unlock()
	if started {
		t.Error("a worker goroutine was started for the calls of Serve")
	}
	r.cfg.inflight.Wait()
}

// TestServeAbandonsAStuckCall: a call stuck in code goja cannot interrupt
// (here a host call that blocks) goes to abandoned with the error Invoke
// would have returned, the calls after it are made on a new goroutine with
// a new runtime, and the stuck one's Invoke returns ErrAbandoned when it
// ends, with nothing it asked for.
func TestServeAbandonsAStuckCall(t *testing.T) {
	r, h, stuck := stuckRuntime(t, 1)

	var mu sync.Mutex
	var results []error
	calls := 0
	abandonedErrs := make(chan error, 2)
	stuckReturned := make(chan error, 1)
	served := make(chan struct{})
	go func() {
		defer close(served)
		r.Serve(func() bool {
			mu.Lock()
			calls++
			n := calls
			mu.Unlock()
			switch n {
			case 1:
				_, err := r.Invoke(stuck)
				stuckReturned <- err
				return true // ignored: another goroutine serves
			case 2:
				_, err := r.Invoke(addEvent)
				mu.Lock()
				results = append(results, err)
				mu.Unlock()
				return true
			}
			return false
		}, func(err error) { abandonedErrs <- err })
	}()
	var se *event.ScriptError
	select {
	case err := <-abandonedErrs:
		if !errors.As(err, &se) || !se.Timeout || !strings.Contains(se.Message, "runtime discarded") {
			t.Fatalf("abandoned with %v, want an abandoned timeout", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the stuck call was never abandoned")
	}
	<-served
	mu.Lock()
	if len(results) != 1 || results[0] != nil {
		t.Errorf("calls after the stuck one: %v, want one that succeeded", results)
	}
	mu.Unlock()
	close(h.getRelease)
	if err := <-stuckReturned; !errors.Is(err, event.ErrAbandoned) {
		t.Errorf("the stuck call's Invoke = %v, want ErrAbandoned", err)
	}
	r.cfg.inflight.Wait()
	if got := h.messages(); strings.Join(got, ",") != "ran web" {
		t.Errorf("logs = %q; the abandoned call must not log after Get", got)
	}
	if a := h.recorded(); len(a) != 0 {
		t.Errorf("the abandoned call queued actions: %+v", a)
	}
	if n := r.cfg.stuck.Load(); n != 0 {
		t.Errorf("%d calls still counted stuck", n)
	}
}
