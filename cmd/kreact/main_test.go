//go:build e2e

package main

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/isolation"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) {
	if os.Getenv(isolation.ChildEnv) == "1" {
		// A kreact run started in-process (startCLI) starts this binary
		// for its isolated rules: it is kreact then, not the tests.
		main()
	}
	// OwnerReferencesPermissionEnforcement, off by default and on in
	// OpenShift and many hardened clusters, holds the RBAC tests to what
	// such a cluster checks: the admin user of the other tests may do
	// anything it checks.
	testcluster.Main(m, testcluster.Options{AdmissionPlugins: []string{"OwnerReferencesPermissionEnforcement"}}, &cluster)
}

// cli is a kreact command running in-process until the test ends.
type cli struct {
	stdout, stderr *testcluster.LogBuffer
	cancel         context.CancelFunc
	done           chan int
}

func startCLI(t *testing.T, args ...string) *cli {
	t.Helper()
	c := &cli{stdout: &testcluster.LogBuffer{}, stderr: &testcluster.LogBuffer{}, done: make(chan int, 1)}
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
