package isolation

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/kreact/kreact/internal/idleprio"
)

const (
	// firstBackoff and maxBackoff bound the wait before a child that
	// exited is started again; a child that ran for resetBackoff starts
	// the sequence over.
	firstBackoff = time.Second
	maxBackoff   = 30 * time.Second
	resetBackoff = time.Minute
	// progressEvery is how often the wait for a stopping child is logged.
	progressEvery = 5 * time.Second
)

// MovedFrom is the side that moves rules to the child, as its Supervisor
// sees it: kreact run's *Split. TakeBack runs the moved rules there
// again, and moves no more; it must return quickly.
type MovedFrom interface {
	TakeBack()
}

// Supervisor runs the isolated rules' kreact process: a lifecycle
// component (Start) that starts it once Want is called.
type Supervisor struct {
	// Command returns the child's command, called at each start; the
	// Supervisor sets its priority, Pdeathsig and report pipe.
	Command func() *exec.Cmd
	Logger  *slog.Logger
	// MovedFrom, if set, takes back the rules moved to the child
	// (TakeBack) when the child cannot be started at all (as opposed to a
	// child that started and exited).
	MovedFrom MovedFrom

	// wanted holds a Want not yet served by a start.
	wanted chan struct{}
	// changed holds a change of Running not yet read from Changed.
	changed chan struct{}
	// backoff is the first wait before a restart; tests shorten it.
	backoff time.Duration

	// mu guards what follows: the moves told so far, the running child's
	// standard input, on which they are sent, and what the child reported.
	mu    sync.Mutex
	moves []Move
	stdin io.WriteCloser
	// running is what the running child last reported; 0 when none runs.
	running int
	// wantedOnce is set at the first Want; heard is closed when the first
	// child reported its first load, exited, or could not start, and
	// firstInvalid is why none of its rules could run, if so.
	wantedOnce   bool
	heard        chan struct{}
	firstInvalid string
}

// NewSupervisor returns a Supervisor of the child that command builds.
func NewSupervisor(command func() *exec.Cmd, logger *slog.Logger) *Supervisor {
	return &Supervisor{Command: command, Logger: logger, wanted: make(chan struct{}, 1), changed: make(chan struct{}, 1), heard: make(chan struct{}), backoff: firstBackoff}
}

var (
	_ Child   = (*Supervisor)(nil)
	_ MovedTo = (*Supervisor)(nil)
)

// Want asks for the child: the first call starts it, and a call after a
// child that could run none of its rules starts another (the rule files
// have changed, or a rule moved). It is safe to call from any goroutine,
// any number of times, and never blocks.
func (s *Supervisor) Want() {
	s.mu.Lock()
	s.wantedOnce = true
	s.mu.Unlock()
	select {
	case s.wanted <- struct{}{}:
	default: // a Want is already waiting
	}
}

// Running is how many rules the running child said it runs after its last
// load: 0 before it said so, and when no child runs.
func (s *Supervisor) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// Heard waits, if Want was called, until the first child has reported its
// first load, has exited, or could not start, or until ctx ends. It
// returns why none of that child's rules can run, if it said so: kreact
// run then exits as it does when none of its own rules can run.
func (s *Supervisor) Heard(ctx context.Context) error {
	s.mu.Lock()
	wanted := s.wantedOnce
	s.mu.Unlock()
	if !wanted {
		return nil
	}
	select {
	case <-ctx.Done():
		return nil
	case <-s.heard:
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.firstInvalid == "" {
		return nil
	}
	return errors.New("isolated rules: none can run: " + s.firstInvalid)
}

// Tell sends the child the rules moved to it (all of them so far): now if
// it runs, and at each start. The child reads them with Listen.
func (s *Supervisor) Tell(moves []Move) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.moves = slices.Clone(moves)
	s.send()
}

// send writes the moves to the running child, if any. s.mu must be held.
// A child that died does not read them; the next one is sent them at its
// start.
func (s *Supervisor) send() {
	if s.stdin == nil {
		return
	}
	line, _ := json.Marshal(message{Moved: s.moves})
	_, _ = s.stdin.Write(append(line, '\n'))
}

// Start runs the child from the first Want until ctx ends, then stops it
// and waits for it. It starts the child again when it exits, after a
// backoff; but a child that exits because none of its rules can run is
// started again only at the next Want.
func (s *Supervisor) Start(ctx context.Context) error {
	backoff := s.backoff
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-s.wanted:
		}
		invalid := s.runChild(ctx, &backoff)
		if ctx.Err() != nil {
			return nil
		}
		if invalid {
			continue // wait for the next Want
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
		s.Want() // started again after a crash, wanted or not
	}
}

// runChild starts a child and waits until it exits or ctx ends; it
// reports whether the child exited because none of its rules can run.
func (s *Supervisor) runChild(ctx context.Context, backoff *time.Duration) (invalid bool) {
	cmd := s.Command()
	began := time.Now()
	exited, reports, err := s.start(cmd)
	if err != nil {
		s.Logger.Error("isolated rules: cannot start their kreact process", "error", err, "retryIn", *backoff)
		s.hear("")
		if s.MovedFrom != nil {
			s.MovedFrom.TakeBack()
		}
		return false
	}
	s.Logger.Info("isolated rules: started their kreact process at idle CPU priority", "pid", cmd.Process.Pid)
	select {
	case err := <-exited:
		why := s.detach(reports)
		if why != "" {
			s.Logger.Error("isolated rules: none of them can run (their problems are logged with isolated=true); their kreact process starts again when the rule files change", "pid", cmd.Process.Pid)
			return true
		}
		if time.Since(began) >= resetBackoff {
			*backoff = s.backoff
		}
		s.Logger.Error("isolated rules: their kreact process exited; starting it again", "pid", cmd.Process.Pid, "error", exitError(err), "retryIn", *backoff)
		return false
	case <-ctx.Done():
		err := s.stop(cmd, exited)
		// A child that said why it exited did not fail while stopping: it
		// exited as kreact run stopped, for want of rules, which kreact
		// run reports itself.
		if why := s.detach(reports); err != nil && why == "" {
			s.Logger.Error("isolated rules: their kreact process failed while stopping", "pid", cmd.Process.Pid, "error", err)
		}
		return false
	}
}

// start starts cmd at idle priority with a pipe on its standard input,
// and another for its reports, and sends it the moves so far: its first
// message, which it waits for before it loads its rules. reports
// receives, once the child can say no more, why none of its rules can
// run if it said so.
func (s *Supervisor) start(cmd *exec.Cmd) (exited <-chan error, reports <-chan string, err error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, w)
	// Descriptors 0-2 are standard input, output and error.
	cmd.Env = append(cmd.Env, ReportFDEnv+"="+strconv.Itoa(2+len(cmd.ExtraFiles)))
	exited, err = idleprio.Start(cmd)
	_ = w.Close() // the child has its own copy
	if err != nil {
		_ = r.Close()
		_ = stdin.Close()
		return nil, nil, err
	}
	s.mu.Lock()
	s.stdin = stdin
	s.send()
	s.mu.Unlock()
	last := make(chan string, 1)
	go func() { last <- s.read(r) }()
	return exited, last, nil
}

// read follows a child's reports until it closes its end, and returns why
// none of its rules can run if it said so.
func (s *Supervisor) read(r io.ReadCloser) (invalid string) {
	defer r.Close()
	lines := bufio.NewScanner(r)
	lines.Buffer(nil, maxMessage)
	for lines.Scan() {
		var m report
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			s.Logger.Error("isolated rules: a report of their kreact process", "error", err)
			continue
		}
		if m.Invalid != "" {
			invalid = m.Invalid
		}
		s.mu.Lock()
		s.running = m.Running
		s.mu.Unlock()
		s.hear(m.Invalid)
		s.announce()
	}
	return invalid
}

// hear notes what the first child said (or that it could not start), once.
func (s *Supervisor) hear(invalid string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.heard:
		return // already heard
	default:
	}
	s.firstInvalid = invalid
	close(s.heard)
}

// detach forgets a child that exited: its standard input, and the rules
// it ran. It returns why none of its rules could run, if it said so.
// Its reports end with it, unless something it started holds their pipe.
func (s *Supervisor) detach(reports <-chan string) (invalid string) {
	select {
	case invalid = <-reports:
	case <-time.After(time.Second):
	}
	s.mu.Lock()
	s.stdin = nil
	s.running = 0
	s.mu.Unlock()
	s.hear(invalid)
	s.announce()
	return invalid
}

// Changed receives after the child reported a load and after it exited,
// when Running may have changed (engine.Elsewhere, which engine.RuleSet
// reads). Changes not yet read are merged into one.
func (s *Supervisor) Changed() <-chan struct{} { return s.changed }

// announce tells Changed, without blocking.
func (s *Supervisor) announce() {
	select {
	case s.changed <- struct{}{}:
	default: // a change is already waiting
	}
}

// stop asks the child to finish its queued changes and actions and exit,
// and waits for it; it returns how the child exited.
func (s *Supervisor) stop(cmd *exec.Cmd, exited <-chan error) error {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	began := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			return err
		case <-tick.C:
			s.Logger.Info("isolated rules: waiting for their kreact process to finish its queued changes and actions", "pid", cmd.Process.Pid, "waited", time.Since(began).Round(time.Second))
		}
	}
}

// exitError is what a child's exit is logged as: "exited" when it ended
// with status 0, which a child is not expected to do on its own.
func exitError(err error) string {
	if err == nil {
		return "exited with status 0"
	}
	return err.Error()
}
