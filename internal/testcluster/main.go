//go:build e2e

package testcluster

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// Main runs a test binary's tests against one control plane: it starts the
// cluster, stores it in *c, runs the tests, stops the cluster and exits.
// It exists only in builds with -tags e2e, so a test file that calls it
// without the constraint //go:build e2e does not compile in `make unit`.
// A cluster that cannot start fails the whole binary with the reason; tests
// are never skipped for want of binaries.
//
//	var cluster *testcluster.Cluster
//	func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }
func Main(m *testing.M, opts Options, c **Cluster) {
	cluster, err := Start(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: %v: %v\n", errNoCluster, err)
		os.Exit(1)
	}
	*c = cluster
	code := m.Run()
	if err := cluster.Stop(); err != nil {
		fmt.Fprintf(os.Stderr, "testcluster: stop: %v\n", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// errNoCluster prefixes the reason Main could not start a control plane.
var errNoCluster = errors.New("no control plane")
