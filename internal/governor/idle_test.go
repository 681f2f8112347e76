package governor

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"runtime/metrics"
)

// idleWatch is an allocWatch whose idleReturn waits after, at most once
// per every, reads heap as the heap held and live, and sends on the
// returned channel instead of handing the heap back.
func idleWatch(t *testing.T, after, every time.Duration, held, live uint64) (*allocWatch, <-chan struct{}) {
	returned := make(chan struct{}, 10)
	w := &allocWatch{calls: map[*Meter]struct{}{}, sample: [1]metrics.Sample{{Name: allocsMetric}}}
	w.idle = idleReturn{
		after: after, every: every, minExcess: 1,
		measure: func() (uint64, uint64) { return held, live },
		ret:     func() { returned <- struct{}{} },
	}
	t.Cleanup(func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.idle.timer != nil {
			w.idle.timer.Stop()
		}
		if w.timer != nil {
			w.timer.Stop()
		}
	})
	return w, returned
}

// idleCall runs one call through w that lasts d.
func idleCall(w *allocWatch, d time.Duration) {
	m := NewMeter(noScript{}, math.MaxInt64, nil)
	w.start(m, time.Now())
	time.Sleep(d)
	w.stop(m)
}

// returnsWithin waits up to a minute (a loaded machine's timers are late,
// never early) for a return.
func returnsWithin(t *testing.T, returned <-chan struct{}) {
	t.Helper()
	select {
	case <-returned:
	case <-time.After(time.Minute):
		t.Fatal("the heap was not handed back after the calls stopped")
	}
}

// TestIdleReturnWaitsForCallsToStop checks that the heap is handed back
// once calls have stopped for idle.after, never while a call runs, and
// that a call starting meanwhile postpones it to after its end.
func TestIdleReturnWaitsForCallsToStop(t *testing.T) {
	const after = 20 * time.Millisecond
	w, returned := idleWatch(t, after, 0, 100<<20, 10<<20)
	idleCall(w, 0)
	returnsWithin(t, returned)

	// A call that outlasts idle.after several times over: the timer set
	// by the call before it fires while it runs and must not return.
	idleCall(w, 0)
	m := NewMeter(noScript{}, math.MaxInt64, nil)
	w.start(m, time.Now())
	time.Sleep(10 * after)
	select {
	case <-returned:
		t.Fatal("the heap was handed back while a call ran")
	default:
	}
	w.stop(m)
	returnsWithin(t, returned)
}

// TestIdleReturnAtMostOncePerEvery checks that two idle spells within
// idle.every hand the heap back once, and the second when idle.every
// has passed.
func TestIdleReturnAtMostOncePerEvery(t *testing.T) {
	const after, every = 10 * time.Millisecond, 500 * time.Millisecond
	w, returned := idleWatch(t, after, every, 100<<20, 10<<20)
	idleCall(w, 0)
	returnsWithin(t, returned)
	first := time.Now()
	idleCall(w, 0)
	returnsWithin(t, returned)
	if since := time.Since(first); since < every-after {
		t.Errorf("the heap was handed back again %s after the first, want at least %s", since, every-after)
	}
}

// TestIdleReturnOnlyWhenWorthIt checks that a heap holding little beyond
// its live heap is left alone, and that the timer is then left unset
// until the next call ends.
func TestIdleReturnOnlyWhenWorthIt(t *testing.T) {
	const after = 10 * time.Millisecond
	w, returned := idleWatch(t, after, 0, 11<<20, 10<<20)
	idleCall(w, 0)
	for {
		w.mu.Lock()
		armed := w.idle.armed
		w.mu.Unlock()
		if !armed {
			break
		}
		time.Sleep(after)
	}
	select {
	case <-returned:
		t.Fatal("a heap holding 1 MiB beyond its 10 MiB live was handed back")
	default:
	}
}

// TestIdleReturnWorth is the rule for what is worth a collection: the
// heap held beyond the live heap is at least half of it, and minExcess.
func TestIdleReturnWorth(t *testing.T) {
	r := idleReturn{minExcess: 1 << 20}
	for _, tc := range []struct {
		name       string
		held, live uint64
		want       bool
	}{
		{"twice the live heap", 40 << 20, 20 << 20, true},
		{"half again", 30 << 20, 20 << 20, true},
		{"a little less than half again", 30<<20 - 1, 20 << 20, false},
		{"small heap, 1 MiB beyond", 2 << 20, 1 << 20, true},
		{"small heap, under 1 MiB beyond", 2<<20 - 1, 1 << 20, false},
		{"nothing held beyond", 20 << 20, 20 << 20, false},
		{"live figure above held (stale)", 10 << 20, 20 << 20, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := r.worth(tc.held, tc.live); got != tc.want {
				t.Errorf("worth(%d, %d) = %v, want %v", tc.held, tc.live, got, tc.want)
			}
		})
	}
}

// TestIdleMeasureSeesTheHeapHeld checks the process's figures: garbage
// the collector has not collected counts as held beyond the live heap,
// and after debug.FreeOSMemory it no longer does.
func TestIdleMeasureSeesTheHeapHeld(t *testing.T) {
	r := newIdleReturn()
	debug.FreeOSMemory()
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	var keep [][]byte
	for range 64 {
		keep = append(keep, make([]byte, 1<<20))
	}
	held, live := r.measure()
	if !r.worth(held, live) {
		t.Errorf("with 64 MiB allocated since the last collection: held %d, live %d, not worth handing back", held, live)
	}
	runtime.KeepAlive(keep)
	keep = nil
	debug.FreeOSMemory()
	held, live = r.measure()
	if r.worth(held, live) {
		t.Errorf("after debug.FreeOSMemory: held %d, live %d, still worth handing back", held, live)
	}
}
