package scripting

import (
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
// call started (runtime/metrics, /gc/heap/allocs:bytes). Calls that run
// at the same time are charged each other's allocations; to keep that
// from stopping calls that allocate nothing, the watchdog stops only the
// call charged most at each reading, and starts the counts of the other
// calls over the limit again from that reading: the bytes that pushed them
// over are blamed on the call it stopped. A call shorter than watchEvery
// is never read at all.
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
	over    []*allocMeter
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
	// base is the allocation counter when the call started, or when the
	// watchdog last blamed another call for what it had been charged.
	base uint64
	// tripped receives the error the call was interrupted with. It is
	// buffered; start empties it.
	tripped chan *memoryError
}

func newAllocMeter(vm *goja.Runtime, limit int64) *allocMeter {
	return &allocMeter{vm: vm, limit: limit, tripped: make(chan *memoryError, 1)}
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
	var worst *allocMeter
	var worstUsed int64
	w.over = w.over[:0]
	for m := range w.calls {
		used := int64(now - m.base)
		if used <= m.limit {
			continue
		}
		w.over = append(w.over, m)
		if worst == nil || used > worstUsed {
			worst, worstUsed = m, used
		}
	}
	if worst == nil {
		return true
	}
	err := &memoryError{limit: worst.limit, used: worstUsed}
	worst.vm.Interrupt(err)
	worst.tripped <- err
	delete(w.calls, worst)
	for _, m := range w.over {
		m.base = now
	}
	clear(w.over)
	return true
}
