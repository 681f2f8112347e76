//go:build !e2e

package testcluster_test

import (
	"errors"
	"testing"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestStartFailsInTheUnitBuild: a test that starts a control plane without
// the e2e tag fails at once instead of running (or skipping) in `make unit`.
func TestStartFailsInTheUnitBuild(t *testing.T) {
	c, err := testcluster.Start(testcluster.Options{BinDir: t.TempDir()})
	if !errors.Is(err, testcluster.ErrUnitBuild) {
		if c != nil {
			_ = c.Stop()
		}
		t.Fatalf("Start in a unit build = %v, want ErrUnitBuild", err)
	}
}
