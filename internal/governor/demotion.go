package governor

import (
	"sync"
	"time"

	"github.com/kreact/kreact/internal/idleprio"
)

// DemoteAfter is how much CPU time a call may use at normal priority.
// Handler calls take microseconds (a typical one about 15µs); a call that
// has run for milliseconds is looping, backtracking or copying, and costs
// the calls beside it.
const DemoteAfter = 2 * time.Millisecond

// callThread is the operating-system thread a call runs on, and whether
// the watchdog has demoted it.
//
// Go's scheduler has no priorities, and a script that spins (an endless
// loop, a catastrophic regular expression, a string doubling) takes a
// whole CPU until its timeout or memory limit stops it. On a small
// machine a few such calls starve everything else: the good rules'
// calls, the informers, the watchdog itself, and the API server when it
// shares the machine. So each call runs locked to its thread, and the
// watchdog moves the thread of a call that has used more than DemoteAfter
// of CPU to the lowest priority the operating system has (Linux:
// SCHED_IDLE, else nice 19): from then on it runs only when nothing else
// wants the CPU. A thread cannot get its priority back without
// privileges, so the goroutine of a demoted call ends when the call ends,
// still locked, and Go ends the thread; the next call starts a new
// goroutine. Every call pays for locking and for three system calls at
// its start (see enter), a microsecond or two. Where the operating
// system offers none of this (thread CPU clocks, per-thread priorities),
// calls are never demoted.
type callThread struct {
	mu sync.Mutex
	// tid is the thread's id while a call runs on it, else 0.
	tid int
	// cpuAtStart is the thread's CPU time when the call started.
	cpuAtStart time.Duration
	demoted    bool
	// faultsAtStart is the thread's page fault count when the call
	// started (threadFaults), if faults says it is known.
	faultsAtStart int64
	faults        bool
}

// enter records the calling thread, which must be locked to the calling
// goroutine, as the one running a call.
//
// It makes three system calls, and cannot make fewer without charging
// calls differently (docs/design/performance-history.md has the figures):
//
//   - The thread's CPU time, from its CPU clock (threadCPUTime), the
//     clock that the watchdog reads later. getrusage (RUSAGE_THREAD),
//     read below for the page faults, also tells a CPU time, but not the
//     same: Linux sums there the time accounted at the
//     thread's last tick or switch, not what it has run since (measured:
//     up to 4ms behind the clock, with 250 ticks a second). As a call's
//     start it would charge a call with up to a tick it never used: a
//     call that waits could be demoted.
//   - The thread's page faults (ownFaults): no clock tells them.
//   - The thread's id, which the watchdog needs to read and demote the
//     thread from its own. The caller locks its goroutine to the thread
//     for the call only, and between calls the goroutine may move to
//     another thread, so the id is read at every call: keeping it locked
//     between calls would make every wake-up of the goroutine a hand-over
//     between two threads in Go's scheduler, which costs more, and Go
//     tells a goroutine's thread by no other means.
func (t *callThread) enter() {
	tid := idleprio.ThreadID()
	cpu, ok := threadCPUTime(tid)
	faults, faultsOK := ownFaults()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.demoted = false
	if ok || faultsOK {
		t.tid, t.cpuAtStart = tid, cpu
		t.faultsAtStart, t.faults = faults, faultsOK
	}
}

// faulted returns how many pages the call's thread has faulted in since
// the call started (see allocWatch): 0 before the call starts, after it
// ends, and where the operating system does not tell.
func (t *callThread) faulted() int64 {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tid == 0 || !t.faults {
		return 0
	}
	n, ok := threadFaults(t.tid)
	if !ok {
		return 0
	}
	return n - t.faultsAtStart
}

// leave ends the call and reports whether its thread was demoted, and,
// if measure is set, the CPU time the call used (0 where unknown). After
// leave the watchdog no longer touches the thread.
func (t *callThread) leave(measure bool) (demoted bool, used time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if measure && t.tid != 0 {
		if cpu, ok := threadCPUTime(t.tid); ok {
			used = cpu - t.cpuAtStart
		}
	}
	t.tid = 0
	return t.demoted, used
}

// check demotes the thread if the call on it has used more than
// DemoteAfter of CPU, and reports whether it did so now. The watchdog
// calls it at each reading. Once demoted, the thread's CPU clock is read
// again only if always is set (for a Meter's cpuLimit); used is what
// the call has used when read, else 0.
func (t *callThread) check(always bool) (demotedNow bool, used time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tid == 0 || t.demoted && !always {
		return false, 0
	}
	cpu, ok := threadCPUTime(t.tid)
	if !ok {
		return false, 0
	}
	used = cpu - t.cpuAtStart
	if t.demoted || used < DemoteAfter {
		return false, used
	}
	// Demoted or not, the call is not demoted again: a thread whose
	// priority cannot be lowered would fail the same way at every reading.
	t.demoted = true
	idleprio.Demote(t.tid)
	return true, used
}
