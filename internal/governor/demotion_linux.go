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
