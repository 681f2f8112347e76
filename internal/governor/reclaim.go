package governor

import (
	"runtime/debug"
	"sync"
	"time"
)

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
// Calls that stay within their limits never cause one that way (but see
// idleReturn, which asks for one once calls have stopped). While the pacer
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

// Reclaim asks for the memory of a call stopped for its memory limit
// (a *MemoryError) to be handed back to the operating system; the caller
// asks once the call's values are garbage (it dropped the runtime that
// held them). The reclaim runs on a goroutine of its own, at most once
// per reclaimEvery, and not while the pacer spaces out collections.
// Reclaim never blocks and is safe for concurrent use.
func Reclaim() { reclaim.request() }

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
