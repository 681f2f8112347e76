package idleprio

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// childEnv makes the test binary, started as a child, print whether its
// main thread is demoted instead of running the tests.
const childEnv = "IDLEPRIO_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		demoted, err := Demoted(ThreadID())
		fmt.Println(demoted, err)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// demoted is Demoted for a live thread.
func demoted(t *testing.T, tid int) bool {
	t.Helper()
	d, err := Demoted(tid)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestDemoteLowersOnlyTheThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if demoted(t, ThreadID()) {
		t.Fatal("a thread is demoted before Demote")
	}
	type result struct {
		demoted bool
		err     error
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		Demote(ThreadID())
		d, err := Demoted(ThreadID())
		done <- result{d, err}
	}()
	if r := <-done; r.err != nil || !r.demoted {
		t.Errorf("the demoted thread: demoted %v, err %v; want SCHED_IDLE or nice 19", r.demoted, r.err)
	}
	if demoted(t, ThreadID()) {
		t.Error("another thread was demoted too")
	}
}

func TestDemotedFailsForAThreadThatEnded(t *testing.T) {
	if _, err := Demoted(1 << 30); err == nil {
		t.Error("Demoted of a thread that does not exist: no error")
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
	if got := strings.TrimSpace(out.String()); got != "true <nil>" {
		t.Errorf("the child's main thread: demoted, err = %s; want true <nil>", got)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if demoted(t, ThreadID()) {
		t.Error("the caller's thread was demoted")
	}
}

func TestStartReportsACommandThatCannotStart(t *testing.T) {
	if _, err := Start(exec.Command("/nonexistent/kreact")); err == nil {
		t.Fatal("Start of a missing program: no error")
	}
}
