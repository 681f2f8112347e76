package scripting

import (
	"cmp"
	"runtime/debug"
	"runtime/metrics"
	"slices"
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
	// maxAllocRate bounds, in bytes per second of CPU time, how fast one
	// script goroutine can allocate: a call that used c of CPU is charged
	// at most c×maxAllocRate. Allocating costs CPU (copying a string,
	// growing an array, faulting fresh pages in); the fastest goja script
	// measured, a string that doubles to 128 MiB, allocated 9 GB per
	// second of CPU; this is almost twice that.
	maxAllocRate = 16 << 30
)

// cpuClock reads the CPU time of the OS thread a script goroutine is
// locked to (threadcpu_linux.go); the zero value reads nothing.
type cpuClock struct {
	id int32
	ok bool
}

// cpuCharge is the most a goroutine can have allocated in ns nanoseconds
// of CPU time.
func cpuCharge(ns int64) int64 {
	if ns <= 0 {
		return 0
	}
	return mul(ns, maxAllocRate>>20, 1) / (1e9 >> 20) // ≈ ns×maxAllocRate/1e9, without overflow
}

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
// stopped, and a doubling string outgrows any machine.
//
// Readings are only as punctual as the Go scheduler: while script
// goroutines keep every P busy, or the runtime waits for a large copy
// before stopping the world, the watchdog goroutine waits too (measured on
// a loaded two-core machine: up to several hundred milliseconds). A call
// that grows linearly overruns by what it allocates meanwhile; one that
// doubles a string can double it several times.
//
// A call is charged at most what its own goroutine could allocate with the
// CPU time it used (cpuCharge): each script goroutine is locked to an OS
// thread, whose CPU clock the watchdog reads (on Linux; elsewhere a call
// is charged with all the process allocates). This spares the calls that
// are innocent but slow only because they wait for a CPU: a handler call
// that used 100µs of CPU is charged at most 1.7 MB, however long it waited
// beside a call that allocates fast. It is sound as long as no script
// allocates faster than maxAllocRate per second of CPU: a call is still
// charged at least what it allocated. The price is a thread per script
// runtime and a thread switch per call (see Runtime).
//
// There is one watchdog per process, because the counter it divides up is
// the process's: calls of every rule, Program and Runtime register with
// it. This is the package's one piece of mutable state besides
// regexp2.DefaultMatchTimeout.
type allocWatch struct {
	mu      sync.Mutex
	calls   map[*allocMeter]struct{}
	running bool
	sample  [1]metrics.Sample
	// budget bounds the charges of all calls together; 0 means none.
	budget int64
	// charged is scratch space for check.
	charged []charge
}

// watchdog is the process's allocWatch.
var watchdog = &allocWatch{
	calls:  make(map[*allocMeter]struct{}),
	sample: [1]metrics.Sample{{Name: allocsMetric}},
	budget: DefaultMemoryBudget,
}

// allocMeter is one call's registration with the watchdog.
type allocMeter struct {
	vm    *goja.Runtime
	limit int64
	// base is the allocation counter when the call started.
	base uint64
	// clock reads the CPU time of the call's goroutine; cpuBase is its
	// reading when the call started.
	clock   cpuClock
	cpuBase int64
	// readCPU, if set, replaces clock (tests).
	readCPU func() (int64, bool)
	// tripped receives the error the call was interrupted with. It is
	// buffered; start empties it.
	tripped chan *memoryError
}

func newAllocMeter(vm *goja.Runtime, limit int64) *allocMeter {
	return &allocMeter{vm: vm, limit: limit, tripped: make(chan *memoryError, 1)}
}

// cpu reads the CPU time of m's goroutine.
func (m *allocMeter) cpu() (int64, bool) {
	if m.readCPU != nil {
		return m.readCPU()
	}
	return m.clock.read()
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
	m.cpuBase, _ = m.cpu()
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
	w.charged = w.charged[:0]
	var sum int64
	for m := range w.calls {
		used := int64(now - m.base)
		if cpu, ok := m.cpu(); ok {
			used = min(used, cpuCharge(cpu-m.cpuBase))
		}
		if used > m.limit {
			w.trip(m, &memoryError{limit: m.limit, used: used})
			continue
		}
		w.charged = append(w.charged, charge{m, used})
		sum = add(sum, used)
	}
	if w.budget <= 0 || sum <= w.budget {
		return true
	}
	// Over the budget, the calls charged most are stopped first: they
	// are the ones allocating (an innocent call is charged little, see
	// cpuCharge). What the calls running hold together is at most the sum
	// of their charges, and at most what the process allocated since the
	// oldest of them started (charges overlap: each call is charged with
	// the others' allocations). The budget is never below the limit of a
	// call running, so that it does not stop a call alone within its limit.
	slices.SortFunc(w.charged, func(a, b charge) int { return cmp.Compare(b.used, a.used) })
	for i, c := range w.charged {
		budget, oldest := w.budget, now
		for _, d := range w.charged[i:] {
			budget = max(budget, d.m.limit)
			oldest = min(oldest, d.m.base)
		}
		if min(sum, int64(now-oldest)) <= budget {
			break
		}
		w.trip(c.m, &memoryError{limit: c.m.limit, used: c.used, budget: budget})
		sum -= c.used
	}
	return true
}

// charge is what a call is charged at one reading.
type charge struct {
	m    *allocMeter
	used int64
}

// trip interrupts m's call with err; w.mu must be held.
func (w *allocWatch) trip(m *allocMeter, err *memoryError) {
	m.vm.Interrupt(err)
	m.tripped <- err
	delete(w.calls, m)
}

// DefaultMemoryBudget is the process's script memory budget (see
// SetMemoryBudget) until it is set: two calls at DefaultMemoryLimit.
const DefaultMemoryBudget = 128 << 20

// SetMemoryBudget bounds what all running calls, of every rule and
// Runtime, may hold together, in bytes: at a reading where they may hold
// more (the sum of their charges, and what the process allocated since
// the oldest started, are both over it), the watchdog stops the calls
// charged most until the others fit. Each call's own limit still applies,
// and a call alone within its limit is never stopped for the budget. Zero or less means no budget. It returns the
// previous budget. Without a budget, calls that each stay within their
// limit could together hold the limit times the number of calls running.
func SetMemoryBudget(n int64) int64 {
	watchdog.mu.Lock()
	defer watchdog.mu.Unlock()
	old := watchdog.budget
	watchdog.budget = max(n, 0)
	return old
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
// Calls that stay within their limits never cause one.
type reclaimer struct {
	mu sync.Mutex
	// pending is set while a reclaim is scheduled and has not started;
	// running while a goroutine serves requests.
	pending, running bool
	last             time.Time
	// free is debug.FreeOSMemory; tests replace it.
	free func()
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
		r.pending = false
		r.mu.Unlock()
		r.free()
		r.mu.Lock()
		r.last = time.Now()
		r.mu.Unlock()
	}
}
