//go:build e2e

package main

import (
	"os"
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
