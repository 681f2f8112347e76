package delivery

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

func TestRestAfter(t *testing.T) {
	for _, c := range []struct {
		name string
		err  error
		want time.Duration
	}{
		{"success", nil, 0},
		{"not a script's failure", errors.New("boom"), 0},
		{"a throw that used 20µs", &event.ScriptError{CPU: 20 * time.Microsecond}, 200 * time.Microsecond},
		{"a timeout that used 1s", &event.ScriptError{Timeout: true, CPU: time.Second}, 10 * time.Second},
		{"wrapped", fmt.Errorf("call: %w", &event.ScriptError{Timeout: true, CPU: 30 * time.Millisecond}), 300 * time.Millisecond},
		{"stopped for 64 MiB", &event.ScriptError{Memory: true, Allocated: 64 << 20, CPU: 30 * time.Millisecond}, 2 * time.Second},
		{"stopped for 64 MiB by mistake, beside a hog", &event.ScriptError{Memory: true, Allocated: 64 << 20, CPU: 50 * time.Microsecond}, 500 * time.Microsecond},
		{"stopped for 16 MiB after 1s of CPU", &event.ScriptError{Memory: true, Allocated: 16 << 20, CPU: time.Second}, 10 * time.Second},
		{"capped", &event.ScriptError{Timeout: true, CPU: time.Hour}, maxRest},
	} {
		if got := RestAfter(c.err); got != c.want {
			t.Errorf("%s: RestAfter = %v, want %v", c.name, got, c.want)
		}
	}
}

// cpuBurner is a Caller whose calls fail as if they had used cpu of CPU
// time, and which records when each call started and ended.
type cpuBurner struct {
	cpu time.Duration

	mu           sync.Mutex
	starts, ends []time.Time
}

func (c *cpuBurner) Invoke(ev event.Event) (event.Outcome, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.starts = append(c.starts, time.Now())
	c.ends = append(c.ends, time.Now())
	return event.Outcome{}, &event.ScriptError{Rule: "r", Handler: ev.Type.Handler(), Memory: true, CPU: c.cpu}
}

func (c *cpuBurner) calls() (starts, ends []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]time.Time(nil), c.starts...), append([]time.Time(nil), c.ends...)
}

// A worker whose call failed after using CPU rests restFactor times that
// long before its next call, of any object; the object is not dropped.
func TestWorkerRestsAfterAFailedCall(t *testing.T) {
	const cpu = 30 * time.Millisecond
	burner := &cpuBurner{cpu: cpu}
	d := New(testRule(func(r *rules.Rule) { r.Retries = 0 }), allHandlers{}, &recorder{}, Options{Logger: quiet()})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, []Caller{burner})
	}()
	defer func() { cancel(); <-done }()
	d.Observe(0, add(cm("a", "1")))
	d.Observe(0, add(cm("b", "1")))
	deadline := time.Now().Add(30 * time.Second)
	for {
		if starts, _ := burner.calls(); len(starts) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the second object was never called")
		}
		time.Sleep(5 * time.Millisecond)
	}
	starts, ends := burner.calls()
	if gap := starts[1].Sub(ends[0]); gap < restFactor*cpu {
		t.Errorf("the next call started %v after a failed call that used %v of CPU, want at least %v", gap, cpu, restFactor*cpu)
	}
}

// Offline tests (Drain) do not rest: a failed call that used an hour of
// CPU does not hold up the next one.
func TestDrainDoesNotRest(t *testing.T) {
	burner := &cpuBurner{cpu: time.Hour}
	d := newTestDelivery(t, testRule(func(r *rules.Rule) { r.Retries = 0 }), allHandlers{}, &recorder{}, nil)
	d.Observe(0, add(cm("a", "1")))
	d.Observe(0, add(cm("b", "1")))
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	d.Drain(ctx, burner)
	if starts, _ := burner.calls(); len(starts) != 2 || ctx.Err() != nil {
		t.Errorf("Drain made %d calls (context: %v), want both objects called at once", len(starts), ctx.Err())
	}
}
