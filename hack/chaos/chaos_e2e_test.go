//go:build e2e

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// The short run of make test: fixed seeds, every kind of fault, and no
// violation of the delivery contract. The long runs are make chaos.
func TestChaosShortRun(t *testing.T) {
	dir := t.TempDir()
	bin := built(t)
	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		seed     uint64
		duration time.Duration
		faults   Faults
	}{
		{"one replica", 1, 60 * time.Second, Faults{Restarts: true, APIServer: true, Edits: true}},
		{"shards", 2, 40 * time.Second, Faults{Restarts: true, Edits: true, Shards: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &Checker{Cluster: cluster, Client: client, Kreact: bin, Dir: dir, Faults: tc.faults, Out: testWriter{t}}
			h, violations, err := c.Run(t.Context(), tc.seed, tc.duration, nil)
			if err != nil {
				t.Fatal(err)
			}
			Report(testWriter{t}, h, violations, tc.faults)
			if len(violations) > 0 {
				t.Errorf("%d violations; shrink and replay with: make chaos SEED=%d DURATION=%v", len(violations), tc.seed, tc.duration)
				for _, p := range h.Procs {
					if data, err := os.ReadFile(p.Log); err == nil && len(data) < 1<<20 {
						t.Logf("%s:\n%s", p.Log, data)
					}
				}
			}
		})
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// built is kreact built from this checkout, once for the package's tests.
var built = func() func(t *testing.T) string {
	var (
		once sync.Once
		bin  string
		err  error
	)
	return func(t *testing.T) string {
		once.Do(func() {
			var dir string
			if dir, err = os.MkdirTemp("", "kreact-chaos-build-"); err == nil {
				bin = filepath.Join(dir, "kreact")
				err = buildKreact(bin)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		return bin
	}
}()

// TestUpgradeLosesNothing is a rolling upgrade under load: replicas of the
// previous build (PreviousRevision, built from git) hold finalizers,
// pending timers, once markers, conditions, owned objects and shard
// leases, and are replaced by this build one at a time while the
// operations go on; the oracle checks the whole history as it checks any
// run. Then this build checks the previous revision's example and deploy
// rules and runs its rule tests: the rule format it shipped still loads
// and behaves the same.
func TestUpgradeLosesNothing(t *testing.T) {
	rev, err := PreviousRevision()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	previous := filepath.Join(dir, "kreact-previous")
	if err := buildRevision(rev, previous); err != nil {
		t.Fatal(err)
	}
	t.Logf("upgrading from %s", rev)
	bin := built(t)
	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	faults := Faults{Edits: true, Shards: true}
	c := &Checker{Cluster: cluster, Client: client, Kreact: bin, From: previous, Dir: dir, Faults: faults, Out: testWriter{t}}
	const seed, duration = 3, 45 * time.Second
	h, violations, err := c.Run(t.Context(), seed, duration, nil)
	if err != nil {
		t.Fatal(err)
	}
	Report(testWriter{t}, h, violations, faults)
	if len(violations) > 0 {
		t.Errorf("%d violations; replay with: go run ./hack/chaos -seed %d -duration %v -shards -from rev:%s", len(violations), seed, duration, rev)
	}
	upgraded := map[int]bool{}
	previousRan := false
	for _, p := range h.Procs {
		previousRan = previousRan || p.Previous
		upgraded[p.Slot] = !p.Previous
	}
	if !previousRan {
		t.Error("no replica ran the previous build")
	}
	for slot, ok := range upgraded {
		if !ok {
			t.Errorf("replica %d still ran the previous build at the end", slot)
		}
	}

	src := previous + ".src"
	for _, args := range [][]string{
		{"validate", "-f", filepath.Join(src, "examples"), "-f", filepath.Join(src, "deploy", "rules")},
		{"test", filepath.Join(src, "examples", "tests")},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Errorf("kreact %v with the rules of %s: %v\n%s", args, rev, err, out)
		}
	}
}
