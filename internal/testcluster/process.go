package testcluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"
)

// process is one control-plane binary run in its own process group, with its
// output appended to a log file.
type process struct {
	name    string
	path    string
	args    []string
	logFile string

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{}
}

func (p *process) start() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil {
		return fmt.Errorf("%s is already running", p.name)
	}
	log, err := os.OpenFile(p.logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(p.path, p.args...)
	cmd.Stdout = log
	cmd.Stderr = log
	// Own process group so that stop reaches any children; the parent-death
	// signal kills the process if the test binary dies without cleaning up.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// The kernel sends the parent-death signal when the thread that
	// started the child ends, not the process, and the tests run kreact's
	// engine in this process, which ends threads (package scripting ends
	// the thread of a call it demoted). So the child is started from a
	// thread locked to the goroutine that waits for it, which lives as
	// long as the child.
	started := make(chan error)
	done := make(chan struct{})
	go func() {
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		log.Close()
		close(done)
	}()
	if err := <-started; err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", p.name, err)
	}
	p.cmd, p.done = cmd, done
	return nil
}

// exited reports whether the process has ended by itself.
func (p *process) exited() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return true
	}
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// stop sends SIGTERM to the process group, waits up to grace, then kills it.
// Stopping a stopped process does nothing.
func (p *process) stop(grace time.Duration) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return nil
	}
	pgid := p.cmd.Process.Pid
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(grace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-p.done
	}
	p.cmd, p.done = nil, nil
	return nil
}

// logTail returns the last bytes of the process's log, for error messages.
func (p *process) logTail() string {
	data, err := os.ReadFile(p.logFile)
	if err != nil {
		return ""
	}
	const max = 4000
	if len(data) > max {
		data = data[len(data)-max:]
	}
	return string(data)
}

// findBinDir locates the folder holding the control-plane binaries:
// $KREACT_BIN_DIR, or bin/ in the repository root above the working directory.
func findBinDir() (string, error) {
	if dir := os.Getenv("KREACT_BIN_DIR"); dir != "" {
		return filepath.Abs(dir)
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "hack", "controlplane", "go.mod")); err == nil {
			return filepath.Join(dir, "bin"), nil
		}
		if filepath.Dir(dir) == dir {
			return "", errors.New("cannot find the kreact repository root (hack/controlplane/go.mod) above " + wd + "; set KREACT_BIN_DIR")
		}
	}
}
