package scripting

import (
	"runtime/metrics"
	"testing"

	"github.com/dop251/goja"
)

// TestWatchdogChargesAtMostWhatTheCPUCouldAllocate checks the CPU cap of a
// reading: a call whose goroutine sat idle is not charged with what the
// process allocated meanwhile, one whose goroutine used CPU is.
func TestWatchdogChargesAtMostWhatTheCPUCouldAllocate(t *testing.T) {
	type thread struct {
		clock cpuClock
		burn  chan int
		done  chan struct{}
	}
	startWorker := func() *thread {
		w := &thread{burn: make(chan int), done: make(chan struct{})}
		ready := make(chan cpuClock)
		go func() {
			c := lockThreadClock()
			defer unlockThread(c)
			ready <- c
			for n := range w.burn {
				x := 0
				for i := range n {
					x += i ^ x
				}
				_ = x
				w.done <- struct{}{}
			}
		}()
		w.clock = <-ready
		if !w.clock.ok {
			t.Fatal("no CPU clock for a locked thread")
		}
		return w
	}
	idle, busy := startWorker(), startWorker()
	defer close(idle.burn)
	defer close(busy.burn)

	w := &allocWatch{calls: map[*allocMeter]struct{}{}, sample: [1]metrics.Sample{{Name: allocsMetric}}}
	const limit = 1 << 20
	sleeper := newAllocMeter(goja.New(), limit)
	sleeper.clock = idle.clock
	worker := newAllocMeter(goja.New(), limit)
	worker.clock = busy.clock
	// Registered by hand: start would run the watchdog's own loop.
	w.calls[sleeper], w.calls[worker] = struct{}{}, struct{}{}
	sleeper.cpuBase, _ = idle.clock.read()
	worker.cpuBase, _ = busy.clock.read()
	// Charged from the start of the process: far more than the limit.
	sleeper.base, worker.base = 0, 0
	// CPU enough to allocate the limit many times over.
	for cpu, _ := busy.clock.read(); ; {
		busy.burn <- 1e6
		<-busy.done
		if now, _ := busy.clock.read(); cpuCharge(now-cpu) > 10*limit {
			break
		}
	}
	idleN := 0
	w.check(&idleN)
	select {
	case err := <-worker.tripped:
		if err.used <= limit {
			t.Errorf("busy call tripped with %+v", err)
		}
	default:
		t.Error("the call whose goroutine used CPU was not stopped")
	}
	select {
	case err := <-sleeper.tripped:
		t.Errorf("the call whose goroutine sat idle was stopped: %v", err)
	default:
	}
}
