package governor

import (
	"time"
)

// Interrupter stops the script of a running call at its next instruction,
// with v as the reason: *goja.Runtime is one.
type Interrupter interface {
	Interrupt(v any)
}

// Meter is one runtime's handle on the governor: each of its calls, one
// at a time, is charged, watched and counted through it. A Meter is made
// once per script runtime and used for every call of that runtime.
//
// A call goes through it in this order: Begin, by whoever waits for the
// call; Enter, on the goroutine that runs the script, locked to its
// thread; Leave, on that goroutine, when the script returned; End, by the
// waiter, once it no longer waits. Begin, End and Tripped belong to the
// waiter's goroutine, Enter and Leave to the script's; Trip may be called
// from any goroutine. The waiter may be the goroutine that runs the
// script (scripting's Runtime.Serve): it then hears of trips through
// OnTrip, since it cannot wait on Tripped.
type Meter struct {
	vm    Interrupter
	limit int64
	// own is set where the call is charged with the pages its thread
	// faults in (perThreadMemory). base is the process's allocation
	// counter when the call started (see allocWatch).
	own  bool
	base uint64
	// cpuLimit is NewMeter's; nil for none.
	cpuLimit func() time.Duration
	// tripped receives the error the call was interrupted with (a
	// *MemoryError or a *CPUError from the watchdog, or what the caller
	// passed to Trip, such as a timeout). Each sender sends at most once a
	// call; Begin empties it.
	tripped chan error
	// onTrip, if set, is told of every trip too (OnTrip).
	onTrip func(error)
	// thread is the thread running the call, which the watchdog demotes
	// if the call runs long.
	thread callThread
}

// NewMeter returns the Meter of a runtime whose calls vm runs. limit is
// the memory, in bytes, that one call may take (see allocWatch) before
// the watchdog interrupts it with a *MemoryError. cpuLimit, if not nil,
// returns the CPU time after which the watchdog interrupts a call with a
// *CPUError, zero for none; it is called at every reading (every 5ms
// while the call runs), from the watchdog's goroutine, so it must be
// cheap and safe for concurrent use. It is only read where the operating
// system tells a thread's CPU time (Linux).
func NewMeter(vm Interrupter, limit int64, cpuLimit func() time.Duration) *Meter {
	return &Meter{vm: vm, limit: limit, own: perThreadMemory(), cpuLimit: cpuLimit, tripped: make(chan error, 2)}
}

// Begin starts charging a call that started at started: from now on the
// watchdog reads it, until End. A stop left in Tripped by the previous
// call is dropped.
func (m *Meter) Begin(started time.Time) { watchdog.start(m, started) }

// End stops charging the call. A trip that raced with it leaves an
// interrupt in the Interrupter, which the caller clears before its next
// call (goja: ClearInterrupt).
func (m *Meter) End() { watchdog.stop(m) }

// Enter is called by the goroutine that runs the call, locked to its
// thread (runtime.LockOSThread), before the script runs. It counts the
// call among those running, for which GOMAXPROCS is raised (see
// scriptProcs), and records the thread, which the watchdog charges with
// its page faults and demotes if the call computes for longer than
// DemoteAfter (see callThread).
func (m *Meter) Enter() {
	procs.add(1)
	m.thread.enter()
}

// Leave ends the call on its thread. It reports whether the watchdog
// demoted the thread, and, if measure is set, the CPU time the call used
// (0 where the operating system does not tell). A demoted thread cannot
// get its priority back: the caller must not unlock it, so that its
// goroutine ends still locked to it and Go ends the thread with it.
func (m *Meter) Leave(measure bool) (demoted bool, used time.Duration) {
	demoted, used = m.thread.leave(measure)
	procs.add(-1)
	return demoted, used
}

// Trip tells the waiter, through Tripped, that the call was interrupted
// with stop; the caller interrupts the script itself. The watchdog trips
// the calls it stops. Trip never blocks: a full channel already holds a
// stop that wakes the waiter.
func (m *Meter) Trip(stop error) {
	select {
	case m.tripped <- stop:
	default:
	}
	if m.onTrip != nil {
		m.onTrip(stop)
	}
}

// OnTrip makes Trip call f too, on the tripping goroutine, for a waiter
// that does not wait on Tripped (it runs the call itself). f must not
// block. OnTrip is called once, before the Meter's first call.
func (m *Meter) OnTrip(f func(stop error)) { m.onTrip = f }

// Tripped receives the stop of the call under way, from the watchdog or
// from Trip.
func (m *Meter) Tripped() <-chan error { return m.tripped }
