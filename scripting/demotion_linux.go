package scripting

import (
	"syscall"
	"time"
	"unsafe"
)

// currentThreadID returns the id of the calling thread.
func currentThreadID() int { return syscall.Gettid() }

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

// demoteThread moves a thread to SCHED_IDLE, the lowest scheduling
// policy, which any thread may do to itself or its siblings without
// privileges (sched(7)), or, where that is refused (a seccomp profile),
// to nice 19.
func demoteThread(tid int) {
	const schedIdle = 5
	var param struct{ priority int32 }
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
	}
}
