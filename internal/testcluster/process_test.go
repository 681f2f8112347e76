package testcluster

import (
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"time"
)

// A child process outlives the thread that asked for it: the kernel's
// parent-death signal follows the thread that forked the child, and
// threads end in this process (package scripting ends demoted ones).
func TestProcessOutlivesTheThreadThatStartedIt(t *testing.T) {
	p := &process{name: "sleep", path: "/bin/sleep", args: []string{"60"}, logFile: filepath.Join(t.TempDir(), "sleep.log")}
	started := make(chan error)
	onMain := make(chan struct{})
	release := make(chan struct{})
	defer close(release)
	for {
		go func() {
			// Never unlocked: the thread ends with this goroutine,
			// unless it is the main thread, which Go keeps. A goroutine
			// that lands there holds it, so that the next one cannot.
			runtime.LockOSThread()
			if syscall.Gettid() == syscall.Getpid() {
				onMain <- struct{}{}
				<-release
				runtime.UnlockOSThread()
				return
			}
			started <- p.start()
		}()
		select {
		case <-onMain:
			continue
		case err := <-started:
			if err != nil {
				t.Fatal(err)
			}
		}
		break
	}
	defer func() { _ = p.stop(time.Second) }()
	// The thread has ended, or ends in a moment; a child killed with it
	// would be gone within this.
	for range 50 {
		if p.exited() {
			t.Fatal("the child was killed when the thread that started it ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
