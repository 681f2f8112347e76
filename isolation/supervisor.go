package isolation

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os/exec"
	"slices"
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

// Supervisor runs the isolated rules' kreact process: a lifecycle
// component (Start) that starts it once Want is called.
type Supervisor struct {
	// Command returns the child's command, called at each start; the
	// Supervisor sets its priority and Pdeathsig.
	Command func() *exec.Cmd
	Logger  *slog.Logger
	// CannotStart, if set, is called when the child cannot be started at
	// all (as opposed to a child that started and exited): Split.TakeBack.
	CannotStart func()

	once   sync.Once
	wanted chan struct{}
	// backoff is the first wait before a restart; tests shorten it.
	backoff time.Duration

	// mu guards the moves told so far and the running child's standard
	// input, on which they are sent.
	mu    sync.Mutex
	moves []Move
	stdin io.WriteCloser
}

// NewSupervisor returns a Supervisor of the child that command builds.
func NewSupervisor(command func() *exec.Cmd, logger *slog.Logger) *Supervisor {
	return &Supervisor{Command: command, Logger: logger, wanted: make(chan struct{}), backoff: firstBackoff}
}

// Want asks for the child: the first call starts it. It is safe to call
// from any goroutine, any number of times.
func (s *Supervisor) Want() { s.once.Do(func() { close(s.wanted) }) }

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

// Start runs the child from the first Want until ctx ends, restarting it
// when it exits, then stops it and waits for it.
func (s *Supervisor) Start(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return nil
	case <-s.wanted:
	}
	backoff := s.backoff
	for {
		cmd := s.Command()
		began := time.Now()
		exited, err := s.start(cmd)
		if err != nil {
			s.Logger.Error("isolated rules: cannot start their kreact process", "error", err, "retryIn", backoff)
			if s.CannotStart != nil {
				s.CannotStart()
			}
		} else {
			s.Logger.Info("isolated rules: started their kreact process at idle CPU priority", "pid", cmd.Process.Pid)
			select {
			case err := <-exited:
				s.detach()
				if time.Since(began) >= resetBackoff {
					backoff = s.backoff
				}
				s.Logger.Error("isolated rules: their kreact process exited; starting it again", "pid", cmd.Process.Pid, "error", exitError(err), "retryIn", backoff)
			case <-ctx.Done():
				s.stop(cmd, exited)
				s.detach()
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, maxBackoff)
	}
}

// start starts cmd at idle priority with a pipe on its standard input,
// and sends it the moves so far: its first message, which it waits for
// before it loads its rules.
func (s *Supervisor) start(cmd *exec.Cmd) (exited <-chan error, err error) {
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	exited, err = idleprio.Start(cmd)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stdin = stdin
	s.send()
	return exited, nil
}

// detach forgets the standard input of a child that exited.
func (s *Supervisor) detach() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stdin = nil
}

// stop asks the child to finish its queued changes and actions and exit,
// and waits for it.
func (s *Supervisor) stop(cmd *exec.Cmd, exited <-chan error) {
	_ = cmd.Process.Signal(syscall.SIGTERM)
	began := time.Now()
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	for {
		select {
		case err := <-exited:
			if err != nil {
				s.Logger.Error("isolated rules: their kreact process failed while stopping", "pid", cmd.Process.Pid, "error", err)
			}
			return
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
