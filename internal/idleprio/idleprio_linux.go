package idleprio

import (
	"fmt"
	"os/exec"
	"runtime"
	"syscall"
	"unsafe"
)

// ThreadID returns the id of the calling thread.
func ThreadID() int { return syscall.Gettid() }

// Demote moves a thread of this process to SCHED_IDLE, the lowest
// scheduling policy, which any thread may do to itself or its siblings
// without privileges (sched(7)), or, where that is refused, to nice 19.
func Demote(tid int) {
	const schedIdle = 5
	var param struct{ priority int32 }
	_, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_SETSCHEDULER, uintptr(tid), schedIdle, uintptr(unsafe.Pointer(&param)))
	if errno != 0 {
		_ = syscall.Setpriority(syscall.PRIO_PROCESS, tid, 19)
	}
}

// Demoted reports whether a thread, of this process or another one,
// runs at the priority Demote gives: SCHED_IDLE, or nice 19. It fails for
// a thread that has ended.
func Demoted(tid int) (bool, error) {
	const schedIdle = 5
	policy, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if errno != 0 {
		return false, fmt.Errorf("sched_getscheduler(%d): %w", tid, errno)
	}
	prio, err := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	if err != nil {
		return false, fmt.Errorf("getpriority(%d): %w", tid, err)
	}
	// The raw system call returns 20-nice.
	return policy == schedIdle || 20-prio == 19, nil
}

// Start starts cmd from a thread demoted for it, and returns once the
// command has started (or failed to). The thread stays, locked and
// blocked, until the command exits: Pdeathsig is tied to the thread that
// forked, not to the process. wait then returns what cmd.Wait returned.
func Start(cmd *exec.Cmd) (wait <-chan error, err error) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	started := make(chan error, 1)
	exited := make(chan error, 1)
	go func() {
		// Never unlocked: the demoted thread ends with this goroutine.
		runtime.LockOSThread()
		Demote(ThreadID())
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		exited <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return exited, nil
}
