package governor

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// maxExtraProcs caps how far scriptProcs raises GOMAXPROCS.
const maxExtraProcs = 256

// scriptProcs keeps a P for the rest of the process whatever the scripts
// do. Go's scheduler has no priorities: when script goroutines hold every
// P (a rule in an endless loop, another copying a huge string), the
// memory watchdog, the informers, the other rules' deliveries and the
// action queues wait in the run queue behind them for 10ms slices, and
// every hop of a good rule's path (event, call, action, request) pays it.
// Measured with the hostile scripts of issue 10 beside a good rule on two
// cores: the good rule's p99 went from 41ms to 8s, and watchdog readings
// came late enough for a doubling string to reach 578 MiB. So GOMAXPROCS
// is kept at least at its value at the first call plus the most calls
// that have run at once (abandoned ones included, until they end):
// however many of them run, as many Ps as the process had stay free for
// everything else, and the operating system shares the CPUs between the
// threads, favouring the ones that mostly sleep (the watchdog, a good
// rule's worker) over the ones that spin. Handler calls are short, so the
// most that run at once is usually a few, unless rules misbehave.
//
// GOMAXPROCS only ever grows, by at most maxExtraProcs, and when it grows
// it at least doubles the Ps added so far. Changing it stops the world,
// which waits for every running call, demoted ones too (callThread):
// hostile rules loaded together used to raise it one call at a time, nine
// stops in a row, where doubling makes five. An idle P costs little. (Go's
// collector sizes its background work by GOMAXPROCS, so after many calls
// at once it takes a larger share of the CPUs while it marks.)
type scriptProcs struct {
	// live counts the calls running; granted is how many Ps were added
	// for them so far. Both are atomics so that a call, on the hot path,
	// takes no lock unless it raises GOMAXPROCS.
	live, granted atomic.Int64

	mu   sync.Mutex // serialises raising GOMAXPROCS
	base int        // GOMAXPROCS at the first call; under mu
}

var procs scriptProcs

// add counts a call that starts (+1) or ends (-1).
func (p *scriptProcs) add(n int) {
	want := min(p.live.Add(int64(n)), maxExtraProcs)
	if want <= p.granted.Load() {
		return // as many Ps as calls running were added already
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.base == 0 {
		p.base = runtime.GOMAXPROCS(0)
	}
	if granted := p.granted.Load(); want > granted {
		want = min(max(want, 2*granted), maxExtraProcs)
		p.granted.Store(want)
		runtime.GOMAXPROCS(p.base + int(want))
	}
}
