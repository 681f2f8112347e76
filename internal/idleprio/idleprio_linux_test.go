package idleprio

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

const schedIdle = 5

// childEnv makes the test binary, started as a child, print its main
// thread's policy and nice value instead of running the tests.
const childEnv = "IDLEPRIO_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		policy, nice := priority(syscall.Gettid())
		fmt.Println(policy, nice)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// priority returns a thread's scheduling policy and nice value.
func priority(tid int) (policy, nice int) {
	p, _, errno := syscall.RawSyscall(syscall.SYS_SCHED_GETSCHEDULER, uintptr(tid), 0, 0)
	if errno != 0 {
		return -1, 0
	}
	n, _ := syscall.Getpriority(syscall.PRIO_PROCESS, tid)
	return int(p), 20 - n // the raw system call returns 20-nice
}

func lowered(policy, nice int) bool { return policy == schedIdle || nice == 19 }

func TestDemoteLowersOnlyTheThread(t *testing.T) {
	done := make(chan [2]int)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		Demote(ThreadID())
		p, n := priority(ThreadID())
		done <- [2]int{p, n}
	}()
	got := <-done
	if !lowered(got[0], got[1]) {
		t.Errorf("demoted thread: policy %d, nice %d; want SCHED_IDLE or nice 19", got[0], got[1])
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if p, n := priority(ThreadID()); lowered(p, n) {
		t.Errorf("another thread was lowered too: policy %d, nice %d", p, n)
	}
}

func TestStartRunsTheChildAtIdlePriority(t *testing.T) {
	cmd := exec.Command(os.Args[0], "-test.run", "^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	wait, err := Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-wait; err != nil {
		t.Fatalf("child: %v", err)
	}
	fields := strings.Fields(out.String())
	if len(fields) != 2 {
		t.Fatalf("child printed %q", out.String())
	}
	policy, _ := strconv.Atoi(fields[0])
	nice, _ := strconv.Atoi(fields[1])
	if !lowered(policy, nice) {
		t.Errorf("child's main thread: policy %d, nice %d; want SCHED_IDLE or nice 19", policy, nice)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if p, n := priority(ThreadID()); lowered(p, n) {
		t.Errorf("the caller's thread was lowered: policy %d, nice %d", p, n)
	}
}

func TestStartReportsACommandThatCannotStart(t *testing.T) {
	if _, err := Start(exec.Command("/nonexistent/kreact")); err == nil {
		t.Fatal("Start of a missing program: no error")
	}
}
