//go:build e2e

package main

import (
	"syscall"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// shutdownLimit is the bound docs/cli.md gives kreact run's shutdown
// ("gives queued actions 10 s"). With no action queued kreact must exit
// within it whatever its watches are doing; it checks that nothing waits
// on client-go's reflector backoff (30 to 60 s after a few outages), not
// speed.
const shutdownLimit = 10 * time.Second

// TestSIGTERMAfterAPIServerOutages: two kreact run processes live through
// five kills of the API server; one receives SIGTERM while the server is
// down again, the other as soon as it is back. Each must exit 0 within
// shutdownLimit.
func TestSIGTERMAfterAPIServerOutages(t *testing.T) {
	const ns = "outage-sigterm-e2e"
	ensureNamespace(t, dynamic.NewForConfigOrDie(cluster.Config()), ns)
	dir := t.TempDir()
	writeRule(t, dir, "noop.yaml", ruleYAML("noop", ns, "function onAdd(obj) {}", ""))
	whileDown, afterwards := startKreact(t, "run", "-f", dir), startKreact(t, "run", "-f", dir)
	for _, k := range []*kreactProcess{whileDown, afterwards} {
		testcluster.Eventually(t, "kreact to sync", func() bool { return k.stderr.Count("caches synced") > 0 })
	}

	cluster.Outages(t, 3*time.Second, 5*time.Second, 3*time.Second, 10*time.Second, 3*time.Second)

	time.Sleep(time.Second)
	up := cluster.Down(t)
	time.Sleep(3 * time.Second)
	terminateWithin(t, "with the API server down", whileDown)
	up()
	terminateWithin(t, "with the API server back", afterwards)
}

// terminateWithin sends k SIGTERM and checks that it exits 0 within
// shutdownLimit.
func terminateWithin(t *testing.T, when string, k *kreactProcess) {
	t.Helper()
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-k.exited():
		if err != nil {
			t.Errorf("kreact exited with %v after SIGTERM %s, want 0", err, when)
		}
	case <-time.After(shutdownLimit):
		t.Errorf("kreact did not exit within %v of SIGTERM %s", shutdownLimit, when)
	}
}
