package governor

import (
	"runtime/metrics"
	"time"
)

const (
	// idleAfter is how long no script call must have run before the
	// heap is handed back (see idleReturn), and idleEvery the shortest
	// time between two such returns.
	idleAfter = time.Second
	idleEvery = 10 * time.Second
	// idleMinExcess is the least heap held beyond the live heap that is
	// worth a collection to hand back.
	idleMinExcess = 1 << 20
)

// Heap figures of runtime/metrics that idleReturn reads: what the heap
// holds from the operating system and has not returned (objects, live or
// garbage; unused space in spans; free pages not yet scavenged), against
// the live heap of the last collection.
var idleMetrics = [...]string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/heap/unused:bytes",
	"/memory/classes/heap/free:bytes",
	liveHeapMetric,
}

// idleReturn hands the heap back to the operating system once script
// calls have stopped for idleAfter, when the heap holds at least half the
// live heap more than the live heap (and idleMinExcess), at most once per
// idleEvery, through the reclaimer (so never while the pacer spaces out
// collections).
//
// Why: under load Go's collector lets the heap grow to twice the live
// heap between collections (GOGC 100), and its scavenger keeps what it
// freed up to a tenth above that goal. When the load stops, no
// collection comes to lower it (the next forced one is two minutes away,
// and it sets the same goal), so a kreact that has handled a burst keeps
// about 2.2 times its live heap resident while it waits for the next,
// where after its initial sync (engine.WaitForSync, which returns the
// heap too) it held about its live heap. The headroom grows with the
// live heap, so with every rule: in the many-rules benchmark (issue 39)
// a rule beyond the first held about 290 KiB live and cost about 770 KiB
// of RSS after the load, against about 350 KiB idle (docs/performance.md,
// "Many rules"). Returning it costs one collection and the page faults of
// taking pages again: at most once per idleEvery more than Go would
// collect, and never while calls keep coming less than idleAfter apart.
//
// idleReturn is part of the process's allocWatch, whose mutex guards it:
// the watchdog sees every call start and end.
type idleReturn struct {
	// timer fires idleAfter after the last call ended (idle); armed
	// says whether it is set or firing. nil until the first call ends.
	timer *time.Timer
	armed bool
	// lastEnd is when the last call ended, lastReturn when the heap was
	// last handed back.
	lastEnd, lastReturn time.Time
	// after, every and minExcess are idleAfter, idleEvery and
	// idleMinExcess; measure reads the heap held and the live heap, and
	// ret hands the heap back (Reclaim). Tests replace them.
	after, every time.Duration
	minExcess    uint64
	measure      func() (held, live uint64)
	ret          func()
}

// newIdleReturn is the process's idleReturn. Its measure reuses one
// slice of samples: like the rest of an idleReturn, it is called under
// its allocWatch's mutex (idleFire).
func newIdleReturn() idleReturn {
	samples := make([]metrics.Sample, len(idleMetrics))
	for i, name := range idleMetrics {
		samples[i].Name = name
	}
	return idleReturn{
		after: idleAfter, every: idleEvery, minExcess: idleMinExcess,
		measure: func() (held, live uint64) {
			metrics.Read(samples)
			for _, s := range samples[:len(samples)-1] {
				held += s.Value.Uint64()
			}
			return held, samples[len(samples)-1].Value.Uint64()
		},
		ret: Reclaim,
	}
}

// worth reports whether a heap that holds held bytes with live of them
// live is worth handing back.
func (r *idleReturn) worth(held, live uint64) bool {
	return held > live && held-live >= max(live/2, r.minExcess)
}

// callsEnded notes that the last call running ended at now, and sets
// the timer; w.mu must be held.
func (w *allocWatch) callsEnded(now time.Time) {
	r := &w.idle
	r.lastEnd = now
	if r.armed {
		return // it fires, and finds when the last call ended
	}
	r.armed = true
	if r.timer == nil {
		r.timer = time.AfterFunc(r.after, w.idleFire)
	} else {
		r.timer.Reset(r.after)
	}
}

// idleFire hands the heap back if no call has run for idle.after since
// the last ended and it is worth it; otherwise it sets the timer again
// for when it may be, or leaves it for the next call's end.
func (w *allocWatch) idleFire() {
	w.mu.Lock()
	r := &w.idle
	now := time.Now()
	if len(w.calls) > 0 {
		// The end of the last of them sets it again.
		r.armed = false
		w.mu.Unlock()
		return
	}
	wait := r.lastEnd.Add(r.after).Sub(now)
	if !r.lastReturn.IsZero() {
		wait = max(wait, r.lastReturn.Add(r.every).Sub(now))
	}
	if wait > 0 {
		r.timer.Reset(wait)
		w.mu.Unlock()
		return
	}
	r.armed = false
	held, live := r.measure()
	if !r.worth(held, live) {
		w.mu.Unlock()
		return
	}
	r.lastReturn = now
	ret := r.ret
	w.mu.Unlock()
	ret()
}
