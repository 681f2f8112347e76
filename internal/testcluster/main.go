package testcluster

import (
	"fmt"
	"os"
	"testing"
)

// Main runs a test binary's tests against one control plane: it starts the
// cluster, stores it in *c, runs the tests, stops the cluster and exits.
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
