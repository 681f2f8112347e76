package governor

import (
	"os"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kreact/kreact/internal/idleprio"
)

const (
	// watchEvery is how often the watchdog reads what each call has
	// taken while calls run. What a call takes between two readings is
	// what it can overrun its limit by (at a few GB/s, some MB).
	watchEvery = 5 * time.Millisecond
	// allocsMetric counts every byte the process has allocated on the
	// heap, garbage included; it only grows.
	allocsMetric = "/gc/heap/allocs:bytes"
	// reuseReading is how old a reading of allocsMetric may be and still
	// serve as the starting point of a call (see allocWatch.start).
	reuseReading = time.Millisecond
	// evidenceShare and minEvidence: a call is stopped on the process's
	// allocations only if it took at least 1/evidenceShare of its limit,
	// and minEvidence, in new memory itself (see allocWatch). Measured
	// beside a hog, a good call's thread took at most 2.5 MiB, doing the
	// collector's work Go gives an allocating goroutine.
	evidenceShare = 8
	minEvidence   = 4 << 20
)

// allocWatch is the watchdog of every call's memory limit. Go has no
// per-goroutine allocation counter, and goja no allocation hook, but each
// call runs locked to an operating-system thread (callThread), and Linux
// counts the page faults of each thread: a call is charged with the pages
// its thread has faulted in since the call started, which is the memory it
// made the process take. A call that computes without allocating faults
// none, whatever the calls beside it allocate, and so does a call that
// waits. Every call over its limit at a reading is stopped.
//
// Faults count pages new to the process, not allocations: garbage that a
// call makes in memory the collector has freed is not charged, nor memory
// others freed that it reuses, and a page a call drops and takes again is
// charged once, unless the process handed it back to the operating system
// in between. A call reusing the free heap would escape its limit, and
// calls running at once could each hold theirs. So each call is also
// charged with what the whole process allocated since it started
// (runtime/metrics /gc/heap/allocs:bytes, read at most reuseReading
// before the call started: see start), which bounds what the calls
// running hold together (all of it was allocated since the oldest
// started), and is stopped over its limit by that figure if it took at
// least 1/evidenceShare of its limit (and minEvidence) in new memory
// itself: evidence that it allocates. A call that computes, waits, or allocates a little beside
// a hog is never stopped on the process's figure.
//
// The process's figure alone, which every call was charged with before,
// stopped loops that allocated nothing, and good calls during a large
// initial list, for the allocations of others (issue 24); it is used
// alone where the kernel does not count a thread's faults, and the error
// then says that it is the process's. Blaming only the call charged most
// was tried before and is unsafe with that figure: with several hostile
// calls at once, each is forgiven whenever another one is stopped, and a
// doubling string outgrows any machine. Capping a call's charge by what
// its thread's CPU time could allocate spares a call that waits, but not
// one that spins.
//
// Readings are only as punctual as the Go scheduler: script calls
// cannot keep every P busy (scriptProcs), but while the runtime waits for
// a large copy before stopping the world, the watchdog's timer waits
// too, and on an overloaded machine its thread waits for a CPU. A call
// that grows linearly overruns by what it takes meanwhile; one that
// doubles a string can double it again.
//
// There is one watchdog per process, so that one timer reads every
// call: the Meters of every runtime register with it. The reclaimer, the
// pacer and scriptProcs are the package's other process-wide state, with
// disableHugePages.
type allocWatch struct {
	mu    sync.Mutex
	calls map[*Meter]struct{}
	// timer makes the readings (fire): set watchEvery after a call starts
	// while none runs, again after each reading while calls run, and
	// stopped when the last call ends. A call shorter than watchEvery,
	// nearly every call, is never read, and a rule that calls at a few
	// per second does not wake a thread every watchEvery between its
	// calls: at 40 writes/s a ticker that ran while calls were under way
	// or had ended within 100ms never stopped, and its 200 wake-ups a
	// second cost kreact a third more CPU than a bare controller (issue
	// 39). armed says whether it is set or firing; nil until the first
	// call.
	timer  *time.Timer
	armed  bool
	sample [1]metrics.Sample
	// last is the last reading of the counter, made at lastAt or
	// later.
	last   uint64
	lastAt time.Time
	// readings counts the readings made, for tests.
	readings atomic.Int64
	// idle hands the heap back once calls have stopped (idle.go).
	idle idleReturn
}

// watchdog is the process's allocWatch.
var watchdog = &allocWatch{
	calls:  make(map[*Meter]struct{}),
	sample: [1]metrics.Sample{{Name: allocsMetric}},
	idle:   newIdleReturn(),
}

// pageSize is the size of the pages that threadFaults counts.
var pageSize = int64(os.Getpagesize())

// perThreadMemory reports whether calls are charged with the pages their
// own thread faults in: the kernel counts them per thread, and one fault
// is one page (disableHugePages). It is probed once.
var perThreadMemory = sync.OnceValue(func() bool {
	if _, ok := ownFaults(); !ok {
		return false
	}
	if _, ok := threadFaults(idleprio.ThreadID()); !ok {
		return false
	}
	return disableHugePages()
})

// allocated reads the counter at now; w.mu must be held.
func (w *allocWatch) allocated(now time.Time) uint64 {
	metrics.Read(w.sample[:])
	w.last, w.lastAt = w.sample[0].Value.Uint64(), now
	return w.last
}

// start charges m from now on, the time its call started. Reading the
// counter takes longer than a short call's own work (it sums every P's
// statistics), so a reading made less than reuseReading before now
// serves as m's base: the counter only grows, so the call is charged
// with at least what the process allocated since it started, and at most
// what it allocated in reuseReading more.
func (w *allocWatch) start(m *Meter, now time.Time) {
	for len(m.tripped) > 0 {
		<-m.tripped
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.lastAt.IsZero() || now.Sub(w.lastAt) >= reuseReading {
		w.allocated(now)
	}
	m.base = w.last
	w.calls[m] = struct{}{}
	if !w.armed {
		w.armed = true
		if w.timer == nil {
			w.timer = time.AfterFunc(watchEvery, w.fire)
		} else {
			w.timer.Reset(watchEvery)
		}
	}
}

// stop ends m's call. A trip that raced with it leaves an interrupt that
// the next call clears (see Meter.End).
func (w *allocWatch) stop(m *Meter) {
	w.mu.Lock()
	delete(w.calls, m)
	if len(w.calls) == 0 {
		if w.armed && w.timer != nil && w.timer.Stop() {
			// Stopped before it fired. Had it fired, fire, waiting for
			// w.mu, finds no call and leaves it unset.
			w.armed = false
		}
		if w.idle.ret != nil {
			w.callsEnded(time.Now())
		}
	}
	w.mu.Unlock()
}

// fire is the timer's reading; it sets the timer again while calls run.
func (w *allocWatch) fire() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.calls) > 0 {
		w.read()
	}
	if len(w.calls) == 0 {
		w.armed = false
		return
	}
	w.timer.Reset(watchEvery)
}

// read is one reading of every call under way: each over a limit is
// stopped, and no longer watched. w.mu must be held.
func (w *allocWatch) read() {
	w.readings.Add(1)
	now := w.allocated(time.Now())
	for m := range w.calls {
		var stop error
		shared := int64(now - m.base)
		if m.own {
			own := m.thread.faulted() * pageSize
			switch {
			case own > m.limit:
				stop = &MemoryError{Limit: m.limit, Used: own}
			case shared > m.limit && own >= max(m.limit/evidenceShare, minEvidence):
				stop = &MemoryError{Limit: m.limit, Used: shared, Process: true, Own: own}
			}
		} else if shared > m.limit {
			stop = &MemoryError{Limit: m.limit, Used: shared, Process: true, Own: -1}
		}
		if stop == nil {
			demotedNow, cpu := m.thread.check(m.cpuLimit != nil)
			if demotedNow {
				pacer.misbehaved()
			}
			if m.cpuLimit != nil {
				if limit := m.cpuLimit(); limit > 0 && cpu > limit {
					stop = &CPUError{Limit: limit}
				}
			}
		}
		if stop == nil {
			continue
		}
		pacer.misbehaved()
		m.vm.Interrupt(stop)
		m.Trip(stop)
		delete(w.calls, m)
	}
}
