package scripting

import (
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"

	"github.com/dop251/goja"
)

const (
	// watchEvery is how often the watchdog reads the allocation counter
	// while calls run. What a call allocates between two readings is
	// what it can overrun its limit by (at a few GB/s, some MB).
	watchEvery = 5 * time.Millisecond
	// watchIdle is how long the watchdog goroutine stays after the last
	// call ended, so that calls in quick succession do not start one
	// goroutine each.
	watchIdle = 100 * time.Millisecond
	// allocsMetric counts every byte the process has allocated on the
	// heap, garbage included; it only grows.
	allocsMetric = "/gc/heap/allocs:bytes"
)

// allocWatch is the watchdog of every call's memory limit. Go has no
// per-goroutine allocation counter, and goja no allocation hook, so a call
// is charged with what the whole process allocated on the heap since the
// call started (runtime/metrics, /gc/heap/allocs:bytes), and every call
// over its limit at a reading is stopped. Calls that run at the same time
// are charged each other's allocations, so a long call beside one that
// allocates fast can be stopped too; a call shorter than watchEvery is
// never read at all, and handler calls are short. Blaming only the call
// charged most, and forgiving the others, was tried and is unsafe: with
// several hostile calls at once, each is forgiven whenever another one is
// stopped, and a doubling string outgrows any machine. Charging every call
// with everything also bounds the calls running together: all they hold
// was allocated since the oldest of them started, which is what it is
// charged, so they hold about one limit however many run. Capping a call's
// charge by what its thread's CPU time could allocate (each script
// goroutine locked to a thread whose CPU clock the watchdog reads) was
// tried too: it spared innocent calls, but locking made every call three
// to four times slower (two thread switches), and once scripts could no
// longer hold every P, the good rule beside the hostile ones of issue 10
// gave nothing up without it either.
//
// Readings are only as punctual as the Go scheduler: script calls
// cannot keep every P busy (scriptProcs), but while the runtime waits for
// a large copy before stopping the world, the watchdog goroutine waits
// too, and on an overloaded machine its thread waits for a CPU. A call
// that grows linearly overruns by what it allocates meanwhile; one that
// doubles a string can double it again.
//
// There is one watchdog per process, because the counter it divides up is
// the process's: calls of every rule, Program and Runtime register with
// it. The reclaimer and scriptProcs are the package's other process-wide
// state, with regexp2.DefaultMatchTimeout.
type allocWatch struct {
	mu      sync.Mutex
	calls   map[*allocMeter]struct{}
	running bool
	sample  [1]metrics.Sample
}

// watchdog is the process's allocWatch.
var watchdog = &allocWatch{
	calls:  make(map[*allocMeter]struct{}),
	sample: [1]metrics.Sample{{Name: allocsMetric}},
}

// allocMeter is one call's registration with the watchdog.
type allocMeter struct {
	vm    *goja.Runtime
	limit int64
	// base is the allocation counter when the call started.
	base uint64
	// cpuLimit is RuntimeOptions.CPULimit; nil for none.
	cpuLimit func() time.Duration
	// tripped receives the error the call was interrupted with (a
	// *memoryError or a *cpuError). It is buffered; start empties it.
	tripped chan error
	// thread is the thread running the call, which the watchdog demotes
	// if the call runs long.
	thread callThread
}

// enter and leave are called on the script goroutine, locked to its
// thread, around each call (see callThread).
func (m *allocMeter) enter() { m.thread.enter() }
func (m *allocMeter) leave(measure bool) (demoted bool, used time.Duration) {
	return m.thread.leave(measure)
}

func newAllocMeter(vm *goja.Runtime, limit int64, cpuLimit func() time.Duration) *allocMeter {
	return &allocMeter{vm: vm, limit: limit, cpuLimit: cpuLimit, tripped: make(chan error, 1)}
}

// allocated reads the counter; w.mu must be held.
func (w *allocWatch) allocated() uint64 {
	metrics.Read(w.sample[:])
	return w.sample[0].Value.Uint64()
}

// start charges m from now on.
func (w *allocWatch) start(m *allocMeter) {
	select {
	case <-m.tripped:
	default:
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	m.base = w.allocated()
	w.calls[m] = struct{}{}
	if !w.running {
		w.running = true
		go w.loop()
	}
}

// stop ends m's call. A trip that raced with it leaves an interrupt that
// the next call clears (Runtime.run calls ClearInterrupt first).
func (w *allocWatch) stop(m *allocMeter) {
	w.mu.Lock()
	delete(w.calls, m)
	w.mu.Unlock()
}

// loop reads the counter every watchEvery while calls run, and ends after
// watchIdle without calls.
func (w *allocWatch) loop() {
	t := time.NewTicker(watchEvery)
	defer t.Stop()
	idle := 0
	for range t.C {
		if !w.check(&idle) {
			return
		}
	}
}

// check is one reading. It returns false when the loop should end.
func (w *allocWatch) check(idle *int) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) == 0 {
		*idle++
		if time.Duration(*idle)*watchEvery >= watchIdle {
			w.running = false
			return false
		}
		return true
	}
	*idle = 0
	now := w.allocated()
	for m := range w.calls {
		var stop error
		if used := int64(now - m.base); used > m.limit {
			stop = &memoryError{limit: m.limit, used: used}
		} else {
			demotedNow, cpu := m.thread.check(m.cpuLimit != nil)
			if demotedNow {
				pacer.misbehaved()
			}
			if m.cpuLimit != nil {
				if limit := m.cpuLimit(); limit > 0 && cpu > limit {
					stop = &cpuError{limit: limit}
				}
			}
		}
		if stop == nil {
			continue
		}
		pacer.misbehaved()
		m.vm.Interrupt(stop)
		m.tripped <- stop
		delete(w.calls, m)
	}
	return true
}

// reclaimEvery is the shortest time between two reclaims (see reclaimer).
const reclaimEvery = 500 * time.Millisecond

// reclaimer hands the memory of calls stopped for their memory limit back
// to the operating system. Go's collector frees their garbage at its next
// cycle, but returns free pages to the kernel slowly (its background
// scavenger), and the next cycle comes late after a call that grew the
// heap: the heap goal is twice the live heap of the last cycle, which
// counted the stopped call's values as live. Measured with hostile rules
// beside good ones, the resident set stayed near 1.7 GiB for seconds
// while Go's heap goal was 140 MiB. So after such a call ends, the
// reclaimer runs debug.FreeOSMemory (a collection, then every free page
// returned), at most once per reclaimEvery, on a goroutine of its own.
// Calls that stay within their limits never cause one. While the pacer
// spaces out collections (gcPacer), a reclaim, itself a collection,
// waits until it stops, and is asked for then.
type reclaimer struct {
	mu sync.Mutex
	// pending is set while a reclaim is scheduled and has not started;
	// running while a goroutine serves requests.
	pending, running bool
	last             time.Time
	// free is debug.FreeOSMemory; tests replace it.
	free func()
	// hold, if set, holds reclaims back while it returns true; whoever
	// sets it asks for a reclaim when it turns false.
	hold func() bool
}

// reclaim is the process's reclaimer.
var reclaim = &reclaimer{free: debug.FreeOSMemory}

// request asks for a reclaim, as soon as reclaimEvery has passed since the
// last one. Requests before it starts are served by it.
func (r *reclaimer) request() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = true
	if r.running {
		return
	}
	r.running = true
	go r.loop()
}

func (r *reclaimer) loop() {
	for {
		r.mu.Lock()
		if !r.pending {
			r.running = false
			r.mu.Unlock()
			return
		}
		wait := time.Until(r.last.Add(reclaimEvery))
		r.mu.Unlock()
		if wait > 0 {
			time.Sleep(wait)
		}
		r.mu.Lock()
		if r.hold != nil && r.hold() {
			// Still pending: the holder asks again when it lets go.
			r.running = false
			r.mu.Unlock()
			return
		}
		r.pending = false
		free := r.free // tests replace it
		r.mu.Unlock()
		free()
		r.mu.Lock()
		r.last = time.Now()
		r.mu.Unlock()
	}
}
