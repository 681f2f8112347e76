package governor

import (
	"math"
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// allocated reads the process's allocation counter.
func allocated() uint64 { return readMetric(allocsMetric) }

// readMetric reads one uint64 runtime metric.
func readMetric(name string) uint64 {
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// noScript is the Interrupter of calls that run Go, not a script: the
// tests see a stop through Meter.Tripped.
type noScript struct{}

func (noScript) Interrupt(any) {}

// call runs body as one call of m, the way a script runtime does: Begin
// and End around it on the calling goroutine, Enter and Leave on a
// goroutine locked to its thread, which ends with the thread if the
// watchdog demoted it.
func call(m *Meter, body func()) {
	m.Begin(time.Now())
	defer m.End()
	done := make(chan struct{})
	go func() {
		defer close(done)
		runtime.LockOSThread()
		m.Enter()
		body()
		if demoted, _ := m.Leave(false); !demoted {
			runtime.UnlockOSThread()
		}
	}()
	<-done
}

// TestWatchdogStopsEveryCallOverItsLimit checks one reading of the
// watchdog: every call over its limit is interrupted, the others are left
// alone.
func TestWatchdogStopsEveryCallOverItsLimit(t *testing.T) {
	w := &allocWatch{calls: map[*Meter]struct{}{}, sample: [1]metrics.Sample{{Name: allocsMetric}}}
	older := NewMeter(noScript{}, 1, nil)
	newer := NewMeter(noScript{}, 1, nil)
	within := NewMeter(noScript{}, math.MaxInt64, nil)
	// Charged with the process's allocations, as where the kernel does
	// not count a thread's page faults.
	older.own, newer.own, within.own = false, false, false
	w.calls[older], w.calls[newer], w.calls[within] = struct{}{}, struct{}{}, struct{}{}
	now := allocated()
	older.base = 0
	newer.base = now - 1000
	within.base = 0
	w.read()
	select {
	case stop := <-older.tripped:
		if err, ok := stop.(*MemoryError); !ok || err.Limit != 1 || err.Used < int64(now) || !err.Process {
			t.Errorf("older tripped with %+v", stop)
		}
	default:
		t.Fatal("the call charged most was not tripped")
	}
	select {
	case stop := <-newer.tripped:
		if err, ok := stop.(*MemoryError); !ok || err.Used < 1000 {
			t.Errorf("newer tripped with %+v", stop)
		}
	default:
		t.Fatal("the other call over its limit was not tripped")
	}
	select {
	case <-within.tripped:
		t.Fatal("the call within its limit was tripped")
	default:
	}
	if _, ok := w.calls[within]; !ok || len(w.calls) != 1 {
		t.Errorf("watched calls = %v, want only the one within its limit", w.calls)
	}
}

// TestWatchdogReadsOnlyWhileCallsRun: the watchdog's timer is set when a
// call starts and none runs, fires every watchEvery while calls run, and
// is stopped when the last call ends, so that a rule called a few times a
// second does not wake a thread every 5ms between its calls.
func TestWatchdogReadsOnlyWhileCallsRun(t *testing.T) {
	w := &allocWatch{calls: map[*Meter]struct{}{}, sample: [1]metrics.Sample{{Name: allocsMetric}}}
	armed := func() bool {
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.armed
	}
	if armed() {
		t.Fatal("the timer is set before any call")
	}
	long, short := NewMeter(noScript{}, math.MaxInt64, nil), NewMeter(noScript{}, math.MaxInt64, nil)
	w.start(long, time.Now())
	w.start(short, time.Now())
	w.stop(short)
	if !armed() {
		t.Fatal("the timer is not set while a call runs")
	}
	// Readings follow one another while the long call runs.
	for n := w.readings.Load() + 2; w.readings.Load() < n; {
		time.Sleep(time.Millisecond)
	}
	w.stop(long)
	// Stopped at once, or, had it just fired, unset by that reading.
	for armed() {
		time.Sleep(time.Millisecond)
	}
	n := w.readings.Load()
	// A call after the last: the timer is set again.
	again := NewMeter(noScript{}, math.MaxInt64, nil)
	w.start(again, time.Now())
	for w.readings.Load() == n {
		time.Sleep(time.Millisecond)
	}
	w.stop(again)
}

// TestMemoryLimitChargesTheCallOnly allocates far past a call's limit
// elsewhere in the process while the call waits: the call is not
// stopped, its charge is its own.
func TestMemoryLimitChargesTheCallOnly(t *testing.T) {
	vm := noScript{}
	m := NewMeter(vm, 16<<20, nil)
	entered, release := make(chan struct{}), make(chan struct{})
	returned := make(chan struct{})
	go func() {
		defer close(returned)
		call(m, func() {
			close(entered)
			<-release
		})
	}()
	<-entered
	// What an informer's initial list, or another rule, allocates.
	keep := make([][]byte, 0, 64)
	for range 64 {
		b := make([]byte, 1<<20)
		for i := range b {
			b[i] = 1
		}
		keep = append(keep, b)
	}
	// Two readings of the watchdog after the allocation, unless it
	// stopped for want of calls (it stopped this one).
	for n := watchdog.readings.Load() + 2; watchdog.readings.Load() < n; {
		watchdog.mu.Lock()
		armed := watchdog.armed
		watchdog.mu.Unlock()
		if !armed {
			break
		}
		runtime.Gosched()
	}
	close(release)
	<-returned
	select {
	case stop := <-m.Tripped():
		t.Errorf("call stopped with %v, want no stop: the call allocated nothing", stop)
	default:
	}
	runtime.KeepAlive(keep)
}

// TestWatchdogSharesRecentReadings: calls that start within reuseReading
// of a reading of the process's counter take it as their base, which is
// never more than the counter when they start; later calls read it again.
func TestWatchdogSharesRecentReadings(t *testing.T) {
	w := &allocWatch{calls: map[*Meter]struct{}{}, sample: [1]metrics.Sample{{Name: allocsMetric}}}
	w.armed = true // no timer: this test reads by hand
	meter := func() *Meter { return NewMeter(noScript{}, math.MaxInt64, nil) }
	t0 := time.Now()
	first, second, third := meter(), meter(), meter()
	w.start(first, t0)
	garbage = make([]byte, 1<<20)
	w.start(second, t0.Add(reuseReading/2))
	if second.base != first.base {
		t.Errorf("a call starting %v after a reading has base %d, want the reading's %d", reuseReading/2, second.base, first.base)
	}
	w.start(third, t0.Add(reuseReading))
	if third.base < first.base+1<<20 {
		t.Errorf("a call starting %v after a reading has base %d, want a new reading past %d", reuseReading, third.base, first.base+1<<20)
	}
	if now := allocated(); third.base > now {
		t.Errorf("base %d is past the counter %d", third.base, now)
	}
	for _, m := range []*Meter{first, second, third} {
		w.stop(m)
	}
}

// garbage keeps an allocation from being optimised away.
var garbage []byte
