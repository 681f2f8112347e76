//go:build e2e

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// TestRunLeavesNoGoroutine starts kreact run in-process and stops it, 20
// times, plain, with --leader-elect and with --shards, each serving its
// endpoints and reloading its rules; no goroutine of any run outlives it.
func TestRunLeavesNoGoroutine(t *testing.T) {
	leaktest.Check(t)
	dir := t.TempDir()
	writeRule(t, dir, "labeller.yaml", labeller("leak-e2e", "one"))
	modes := [][]string{
		nil,
		{"--leader-elect", "--leader-elect-namespace", "default", "--leader-elect-name", "kreact-leak-e2e",
			"--leader-elect-lease-duration", "2s", "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "300ms"},
		{"--shards", "--shard-namespace", "default", "--shard-group", "kreact-leak-e2e",
			"--shard-lease-duration", "4s", "--shard-renew-period", "500ms"},
	}
	for i := range 20 {
		mode := modes[i%len(modes)]
		args := append([]string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(),
			"--reload-interval", "100ms", "--metrics-bind-address", testcluster.FreeAddr(t)}, mode...)
		stdout, stderr := &testcluster.LogBuffer{}, &testcluster.LogBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- runMain(ctx, args, stdout, stderr) }()
		running := func() bool { return strings.Contains(stderr.String(), "kreact is running") }
		testcluster.Eventually(t, fmt.Sprintf("run %d to be running", i), func() bool {
			select {
			case code := <-done:
				done <- code
				return true // exited early: reported below
			default:
				return running()
			}
		})
		cancel()
		select {
		case code := <-done:
			if code != exitOK || !running() {
				t.Fatalf("run %d (%s) exited %d\n%s", i, strings.Join(mode, " "), code, stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("run %d (%s) did not return within 60s of its context ending\n%s", i, strings.Join(mode, " "), stderr)
		}
	}
}
