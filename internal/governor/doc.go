// Package governor holds the process-wide state that governs script
// calls: what each call is charged with and stopped for (its memory and
// CPU limits), the priority of the thread it runs on, GOMAXPROCS, the
// pacing of Go's collector, and handing the memory of stopped calls back
// to the operating system. Package scripting runs the JavaScript; each of
// its runtimes holds a Meter, through which every call it makes is
// charged and watched. Nothing here knows JavaScript: a call is what runs
// between a Meter's Begin and End, on the thread that called Enter, and
// an Interrupter stops it. (A governor is what keeps an engine from
// running away whatever its load; this one keeps any one script call from
// taking the process.)
//
// # Why one governor per process
//
// Go has no per-goroutine allocation counter, no per-goroutine CPU clock
// and no scheduler priorities, and goja has no allocation hook. What the
// operating system counts per thread stands in for them: each call runs
// locked to its thread, and one timer, the watchdog, reads every call's
// thread every 5ms while calls run (and not at all between calls). What it steers is process-wide by
// nature (GOMAXPROCS, GOGC, transparent huge pages, the heap handed back
// to the kernel), so one owner decides for every rule, Program and
// Runtime of the process. This package is the process's whole script
// governance; package scripting's only other process-wide effect is the
// match timeout of regular expressions (regexp2.DefaultMatchTimeout).
//
// # What a call is charged with
//
// Memory: the pages its thread is the first to touch since the call
// started (its minor page faults, which Linux counts per thread), read
// every 5ms while it runs. A call over its limit at a reading is
// interrupted with a *MemoryError. Page faults miss memory the collector
// freed and a call reuses, so each call is also charged with what the
// whole process allocated since it started (/gc/heap/allocs:bytes,
// garbage included; read at most a millisecond before the call started,
// a reading shared by the calls that start in that millisecond), and
// stopped over its limit by that figure only if the call took at least an
// eighth of its limit, and 4 MiB, in new memory itself (the error then
// says that the figure is the process's, and what the call took). A call
// that took (almost) nothing is never stopped on it: what other calls,
// the informers or the rest of the process allocate is not the call's,
// and a loop that allocates nothing is never stopped for memory, however
// much is allocated beside it. Where the kernel does not count a
// thread's faults (other systems, no /proc), the process's figure alone
// is used, and the error says so.
//
// A thread's page faults are the memory it makes the process take, not
// all it allocates. Whatever runs on the call's thread counts as the
// call's own: the host functions it calls, the collector's work that Go
// makes an allocating goroutine do, and under the race detector the
// shadow of what the call writes (up to four times as much). So that one
// fault is one page, the process asks the kernel for no transparent huge
// pages (prctl PR_SET_THP_DISABLE; where that is refused, calls are
// charged with the process's figure alone). Because a call that
// allocates is also stopped on everything the process allocated since it
// started, what the calls running hold together is about one limit, plus
// overruns, however many of them take memory: all they hold was
// allocated since the oldest of them started.
//
// CPU: the time its thread's CPU clock advanced since the call started
// (Linux), read at the same readings when the Meter has a CPU limit; a
// call over it is interrupted with a *CPUError. Leave reports the CPU
// time a call used when asked (scripting asks for failed calls, by whose
// CPU time package delivery makes the rule rest).
//
// # What charging costs a call
//
// Every call starts with three system calls on its thread: its id
// (gettid), its CPU clock (clock_gettime) and its page faults (getrusage
// RUSAGE_THREAD): the thread the watchdog reads, and the baselines of the
// demotion and the CPU limit, and of the memory charge. Fewer would
// charge calls differently: getrusage's CPU time, which would spare the
// clock, is what Linux accounted at the thread's last tick or switch,
// behind the clock by up to a tick (4ms at 250 ticks a second), so a
// call would be charged with time it never used and could be demoted
// while it waits; and a goroutine runs on one thread only while it is
// locked, which is for the call (see callThread.enter). Taking them
// later, at the watchdog's first reading, would leave what a call takes
// before it uncharged. BenchmarkMeterCall measures the whole.
//
// # When a thread is demoted
//
// A call whose thread has used DemoteAfter (2ms) of CPU is moved, at the
// next reading, to SCHED_IDLE (Linux; nice 19 where that is refused; see
// package idleprio): a looping or copying call then runs only on CPU time
// nobody else wants. A thread cannot get its priority back without
// privileges, so Leave reports the demotion and the caller lets the
// thread end with its goroutine; a child process started from that thread
// with Pdeathsig set ends with it. Where the operating system offers no
// thread CPU clock or per-thread priority, calls are never demoted.
//
// # What else is process-wide
//
//   - GOMAXPROCS is raised to its value at the first call plus the most
//     calls that have run at once (scriptProcs), growing by doubling and
//     never lowered: the process keeps as many Ps for everything else
//     (the watchdog, informers, other rules' deliveries) as it started
//     with, and the operating system shares the CPUs between threads.
//   - While calls misbehave (one was demoted or stopped for memory in the
//     last 3s), GOGC is raised until the heap may grow by 128 MiB between
//     collections (gcPacer), because every collection stops the world and
//     waits for demoted calls too. GOGC returns to its value before when
//     pressure ends; with GOGC off the pacer does nothing.
//   - The memory of a call stopped for its limit is handed back to the
//     operating system (Reclaim, which the caller asks for once the call's
//     values are garbage): debug.FreeOSMemory, at most twice a second,
//     not while the pacer spaces out collections, but when it stops.
//     Calls that stay within their limits never cause one for that.
//   - Once script calls have stopped for a second, the heap is handed
//     back the same way when it holds at least half the live heap more
//     than the live heap, at most once every 10s (idleReturn): what Go's
//     collector let the heap grow to under load stays resident otherwise
//     until the next load, about 2.2 times the live heap.
//   - Transparent huge pages are turned off for the process, at the
//     first Meter (see above).
//
// # Guarantees
//
// Guaranteed: a call that takes memory step by step is stopped at the
// first reading after it passes its limit (overrun: what it takes until
// then, plus one step such as one doubling of a string); a call whose
// thread took less than an eighth of its limit is never stopped for
// memory, whatever the rest of the process allocates; a call that waits
// without computing is never demoted.
//
// Not guaranteed: punctual readings. They are due every 5ms, and script
// calls cannot hold every P, but they come late on an overloaded machine,
// or while the runtime waits for a huge copy to stop the world, and a
// string that doubles can double again meanwhile. A call shorter than 5ms
// is never read. Nothing here stops a single step that allocates past the
// limit (the caller refuses such built-ins before they run), nor a call
// its Interrupter cannot stop (goja checks only between instructions).
// What this cannot remove is that one process's calls share its
// collector: beside hostile calls, a good rule's calls still wait for
// collections that wait for the hostile ones.
//
// # Concurrency
//
// Reclaim and FormatBytes are safe for concurrent use. A Meter serves one
// call at a time, in the roles its doc gives (Begin, End and Tripped on
// the goroutine that waits for the call, Enter and Leave on the call's
// thread, Trip from any goroutine); the Meters of different runtimes are
// used concurrently. The watchdog, the pacer and the reclaimer each run
// on a goroutine of their own while they have work, and end by themselves
// (100ms after the last call, 3s after the last misbehaving one, once no
// reclaim is pending); the idle return is a timer that the end of the
// last call running sets, and nothing runs between its firings.
package governor
