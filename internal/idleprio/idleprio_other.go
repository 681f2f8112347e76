//go:build !linux

package idleprio

import "os/exec"

// Without per-thread priorities, threads keep theirs.

func ThreadID() int             { return 0 }
func Demote(int)                {}
func Demoted(int) (bool, error) { return false, nil }

// Start starts cmd and lowers the child to nice 19 (the whole process,
// where the operating system has no thread priorities). The child is
// not killed when this process dies.
func Start(cmd *exec.Cmd) (wait <-chan error, err error) {
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	lower(cmd.Process.Pid)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	return exited, nil
}
