package main

import (
	"bytes"
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// syncBuffer is an io.Writer the command writes and the test reads at once.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// cli is a kreact command running in-process until the test ends.
type cli struct {
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
	done           chan int
}

func startCLI(t *testing.T, args ...string) *cli {
	t.Helper()
	c := &cli{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan int, 1)}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() { c.done <- runMain(ctx, args, c.stdout, c.stderr) }()
	t.Cleanup(func() {
		code := c.stop()
		if t.Failed() {
			t.Logf("kreact %s exited %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, c.stdout, c.stderr)
		}
	})
	return c
}

// stop cancels the command (as SIGINT would) and returns its exit code.
func (c *cli) stop() int {
	c.cancel()
	select {
	case code := <-c.done:
		c.done <- code
		return code
	case <-time.After(60 * time.Second):
		return -1
	}
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(t.Context(), 25*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("timed out waiting for %s", what)
	}
}
