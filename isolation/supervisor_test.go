package isolation

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// childEnv makes the test binary, started as a child, act as an isolated
// kreact would in the way its value names, instead of running the tests.
const childEnv = "ISOLATION_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
	case "exit":
		os.Exit(3)
	case "echo":
		// Prints what its parent sends, until SIGTERM.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		go func() { _, _ = io.Copy(os.Stdout, os.Stdin) }()
		<-c
		os.Exit(0)
	case "report":
		// Reports two rules running, as kreact run's isolated process does
		// after its load, then waits for SIGTERM.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		rep, err := OpenReporter(os.Getenv)
		if err != nil || rep == nil {
			fmt.Println("no reporter:", err)
			os.Exit(1)
		}
		rep.Loaded(2)
		<-c
		os.Exit(0)
	case "invalid":
		// Says none of its rules can run, and exits as kreact run does.
		rep, err := OpenReporter(os.Getenv)
		if err != nil || rep == nil {
			fmt.Println("no reporter:", err)
			os.Exit(1)
		}
		rep.Invalid(errors.New(`r.yaml:8:17: spec.watch[0].resource: "deploymnets": no such resource; did you mean "deployments"?`))
		os.Exit(3)
	case "term":
		// Waits for SIGTERM, as kreact run does, and says it got it.
		c := make(chan os.Signal, 1)
		signal.Notify(c, syscall.SIGTERM)
		fmt.Println("ready")
		<-c
		fmt.Println("got SIGTERM")
		os.Exit(0)
	}
	leaktest.VerifyTestMain(m)
}

// child returns a command that runs this test binary as a child in mode,
// and counts how many were built.
func child(mode string, out io.Writer, built *int, mu *sync.Mutex) func() *exec.Cmd {
	return func() *exec.Cmd {
		mu.Lock()
		*built++
		mu.Unlock()
		cmd := exec.Command(os.Args[0], "-test.run", "^$")
		cmd.Env = append(os.Environ(), childEnv+"="+mode)
		cmd.Stdout, cmd.Stderr = out, out
		return cmd
	}
}

// running runs s.Start until the returned stop is called, which waits
// for it to return.
func running(t *testing.T, s *Supervisor) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error)
	go func() { done <- s.Start(ctx) }()
	return func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

func TestSupervisorStartsNothingUntilWanted(t *testing.T) {
	var mu sync.Mutex
	built := 0
	s := NewSupervisor(child("exit", io.Discard, &built, &mu), slog.New(slog.DiscardHandler))
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	if err := s.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if built != 0 {
		t.Errorf("%d children started without Want", built)
	}
}

func TestSupervisorRestartsAChildThatExits(t *testing.T) {
	var mu sync.Mutex
	built := 0
	var logs testcluster.LogBuffer
	s := NewSupervisor(child("exit", io.Discard, &built, &mu), slog.New(slog.NewTextHandler(&logs, nil)))
	s.backoff = 10 * time.Millisecond
	s.Want()
	s.Want() // a second Want changes nothing
	stop := running(t, s)
	eventually(t, "three starts", func() bool { mu.Lock(); defer mu.Unlock(); return built >= 3 })
	stop()
	if n := strings.Count(logs.String(), "their kreact process exited; starting it again"); n < 2 {
		t.Errorf("%d exits logged:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "exit status 3") {
		t.Errorf("the exit status is not logged:\n%s", logs.String())
	}
}

func TestSupervisorStopsTheChildWithSIGTERM(t *testing.T) {
	var mu sync.Mutex
	built := 0
	var out, logs testcluster.LogBuffer
	s := NewSupervisor(child("term", &out, &built, &mu), slog.New(slog.NewTextHandler(&logs, nil)))
	s.Want()
	stop := running(t, s)
	eventually(t, "the child to be ready", func() bool { return strings.Contains(out.String(), "ready") })
	stop()
	if !strings.Contains(out.String(), "got SIGTERM") {
		t.Errorf("the child did not get SIGTERM before Start returned; it printed %q", out.String())
	}
	if strings.Contains(logs.String(), "exited; starting it again") || built != 1 {
		t.Errorf("a stop was taken for a crash (%d children):\n%s", built, logs.String())
	}
}

func TestSupervisorSendsTheMovesAtStartAndAfter(t *testing.T) {
	var mu sync.Mutex
	built := 0
	var out testcluster.LogBuffer
	s := NewSupervisor(child("echo", &out, &built, &mu), slog.New(slog.DiscardHandler))
	s.Tell([]Move{{Rule: "a", Fingerprint: "1"}})
	s.Want()
	stop := running(t, s)
	eventually(t, "the first message", func() bool { return strings.Contains(out.String(), `{"moved":[{"rule":"a","fingerprint":"1"}]}`) })
	s.Tell([]Move{{Rule: "a", Fingerprint: "1"}, {Rule: "b", Fingerprint: "2"}})
	eventually(t, "the second message", func() bool {
		return strings.Contains(out.String(), `{"moved":[{"rule":"a","fingerprint":"1"},{"rule":"b","fingerprint":"2"}]}`)
	})
	stop()
}

// takeBackFunc is a MovedFrom that calls itself at each TakeBack.
type takeBackFunc func()

func (f takeBackFunc) TakeBack() { f() }

func TestSupervisorReportsAChildThatCannotStart(t *testing.T) {
	var logs testcluster.LogBuffer
	s := NewSupervisor(func() *exec.Cmd { return exec.Command(filepath.Join(t.TempDir(), "missing")) }, slog.New(slog.NewTextHandler(&logs, nil)))
	s.backoff = 10 * time.Millisecond
	cannot := make(chan struct{}, 10)
	s.MovedFrom = takeBackFunc(func() { cannot <- struct{}{} })
	s.Want()
	stop := running(t, s)
	<-cannot
	stop()
	if !strings.Contains(logs.String(), "cannot start their kreact process") {
		t.Errorf("the failure is not logged:\n%s", logs.String())
	}
}

// A child's report of its load is what Running says, and what Heard waits
// for; Changed is told.
func TestSupervisorCountsWhatTheChildReports(t *testing.T) {
	var mu sync.Mutex
	built := 0
	s := NewSupervisor(child("report", io.Discard, &built, &mu), slog.New(slog.DiscardHandler))
	if err := s.Heard(t.Context()); err != nil || s.Running() != 0 {
		t.Fatalf("before Want: Heard = %v, Running = %d; want nil and 0", err, s.Running())
	}
	s.Want()
	stop := running(t, s)
	if err := s.Heard(t.Context()); err != nil {
		t.Errorf("Heard = %v, want nil: the child runs its rules", err)
	}
	if n := s.Running(); n != 2 {
		t.Errorf("Running = %d, want the 2 the child reported", n)
	}
	<-s.Changed()
	if n := s.Running(); n != 2 {
		t.Errorf("after Changed: Running = %d, want 2", n)
	}
	stop()
	if n := s.Running(); n != 0 {
		t.Errorf("Running = %d once the child stopped, want 0", n)
	}
}

// A child none of whose rules can run says why: Heard returns it, and the
// child is not started again until the next Want (an edit, a move), unlike
// a child that fails.
func TestSupervisorWaitsForWantAfterAChildWithNoRules(t *testing.T) {
	var mu sync.Mutex
	built := 0
	var logs testcluster.LogBuffer
	s := NewSupervisor(child("invalid", io.Discard, &built, &mu), slog.New(slog.NewTextHandler(&logs, nil)))
	s.backoff = 10 * time.Millisecond
	s.Want()
	stop := running(t, s)
	err := s.Heard(t.Context())
	if err == nil || !strings.Contains(err.Error(), `r.yaml:8:17: spec.watch[0].resource: "deploymnets": no such resource; did you mean "deployments"?`) {
		t.Errorf("Heard = %v, want the child's problems", err)
	}
	eventually(t, "the exit to be logged", func() bool { return strings.Contains(logs.String(), "none of them can run") })
	time.Sleep(100 * time.Millisecond) // ten backoffs
	mu.Lock()
	if built != 1 {
		t.Errorf("%d children started before the next Want, want 1", built)
	}
	mu.Unlock()
	s.Want()
	eventually(t, "a second child", func() bool { mu.Lock(); defer mu.Unlock(); return built == 2 })
	stop()
	if strings.Contains(logs.String(), "starting it again") {
		t.Errorf("a child with no rules was taken for a crash:\n%s", logs.String())
	}
}
