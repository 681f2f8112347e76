package scripting

import (
	"runtime"
	"syscall"
	"unsafe"
)

// lockThreadClock locks the calling goroutine to its OS thread and returns
// the clock of that thread's CPU time, which another goroutine can read:
// Linux's per-thread CPU clock, MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED).
// The caller must unlockThread when it exits.
func lockThreadClock() cpuClock {
	runtime.LockOSThread()
	tid := int32(syscall.Gettid())
	c := cpuClock{id: (^tid)<<3 | 6, ok: true}
	if _, ok := c.read(); !ok {
		runtime.UnlockOSThread()
		return cpuClock{}
	}
	return c
}

// unlockThread undoes lockThreadClock.
func unlockThread(c cpuClock) {
	if c.ok {
		runtime.UnlockOSThread()
	}
}

// read returns the thread's CPU time in nanoseconds, user and system.
func (c cpuClock) read() (int64, bool) {
	if !c.ok {
		return 0, false
	}
	var ts syscall.Timespec
	_, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, uintptr(c.id), uintptr(unsafe.Pointer(&ts)), 0)
	if errno != 0 {
		return 0, false
	}
	return ts.Nano(), true
}
