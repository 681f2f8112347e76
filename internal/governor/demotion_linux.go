package governor

import (
	"syscall"
	"time"
	"unsafe"
)

// threadCPUTime returns the CPU time a thread of this process has used,
// read from its CPU clock (clock_gettime(2) with the clock id
// MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED) of the kernel's
// posix-cpu-timers, which any thread of the process may read).
func threadCPUTime(tid int) (time.Duration, bool) {
	const cpuClockSched, cpuClockPerThread = 2, 4
	clock := int32(^int32(tid)<<3 | cpuClockSched | cpuClockPerThread)
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, uintptr(clock), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}

// ownCPUTime is threadCPUTime for the calling thread: the same clock
// (CLOCK_THREAD_CPUTIME_ID is the calling thread's CPUCLOCK_SCHED, which
// the kernel reads with the same function, task_sched_runtime), so a
// reading from here and a later one by the thread's id from another
// thread are comparable, without looking the thread up by its id.
func ownCPUTime() (time.Duration, bool) {
	const clockThreadCPUTimeID = 3
	var ts syscall.Timespec
	_, _, errno := syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return time.Duration(ts.Nano()), true
}
