package engine_test

import (
	"context"
	"log/slog"
	"runtime/debug"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
)

func TestRulesBehind(t *testing.T) {
	tests := []struct {
		name  string
		rules []engine.Status
		want  []string
	}{
		{name: "no rules"},
		{name: "all synced", rules: []engine.Status{{Rule: "a", Running: true, Synced: true}}},
		{name: "waiting rules do not count", rules: []engine.Status{{Rule: "a", Waiting: "no CRD"}}},
		{name: "sorted", rules: []engine.Status{
			{Rule: "c", Running: true}, {Rule: "b", Running: true, Synced: true}, {Rule: "a", Running: true},
		}, want: []string{"a", "c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := engine.RulesBehind(tt.rules); !slices.Equal(got, tt.want) {
				t.Errorf("RulesBehind = %q, want %q", got, tt.want)
			}
		})
	}
}

// fakeSync is a SyncView whose rule "a" catches up when caughtUp is set.
type fakeSync struct{ caughtUp atomic.Bool }

func (f *fakeSync) view() engine.SyncView {
	key := func(resource, ns string) dynamicinformer.Key {
		return dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: resource}, Namespace: ns}
	}
	return engine.SyncView{
		Rules: func() []engine.Status {
			return []engine.Status{
				{Rule: "a", Running: true, Synced: f.caughtUp.Load()},
				{Rule: "b", Running: true, Synced: true},
				{Rule: "c", Waiting: "widgets.example.com is not served"},
			}
		},
		Informers: func() []dynamicinformer.WatchStatus {
			cms := dynamicinformer.WatchStatus{Key: key("configmaps", "x"), Phase: dynamicinformer.PhaseStarting, Owners: []string{"a"}, Objects: 1200}
			if f.caughtUp.Load() {
				cms.Phase, cms.Synced, cms.Objects = dynamicinformer.PhaseSynced, true, 3000
			}
			return []dynamicinformer.WatchStatus{
				cms,
				{Key: key("pods", ""), Phase: dynamicinformer.PhaseSynced, Synced: true, Owners: []string{"b"}, Objects: 5},
				// A standby's warm watch, no rule's: never reported.
				{Key: key("secrets", ""), Phase: dynamicinformer.PhaseStarting, Owners: []string{"warm:z"}, Objects: 7},
			}
		},
	}
}

// TestWaitForSyncReportsProgress: while a rule is behind, WaitForSync says
// which rule and how far its informers are; once it has caught up, one
// "caches synced" line reports every running rule's informers, and the
// waiting rule is named.
func TestWaitForSyncReportsProgress(t *testing.T) {
	var f fakeSync
	logs := &testcluster.LogBuffer{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		engine.WaitForSync(t.Context(), slog.New(slog.NewTextHandler(logs, nil)), f.view(), time.Millisecond, time.Millisecond)
	}()
	testcluster.Eventually(t, "a progress line", func() bool { return logs.Count("waiting for caches to sync") > 0 })
	if logs.Count("caches synced") != 0 {
		t.Fatalf("synced while rule a is behind:\n%s", logs)
	}
	f.caughtUp.Store(true)
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("WaitForSync did not return once every rule had caught up")
	}

	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	last := lines[len(lines)-1]
	var progress []string
	for _, l := range lines[:len(lines)-1] {
		if strings.Contains(l, "waiting for caches to sync") {
			progress = append(progress, l)
		}
	}
	if len(progress) == 0 {
		t.Fatalf("no progress line before the last one:\n%s", logs)
	}
	// A report taken as rule a catches up may show either state; the first
	// one shows the informer starting.
	want := `rules=a objects=1200 informers="configmaps.v1 in namespace \"x\": starting, 1200 objects"`
	if !strings.Contains(progress[0], want) {
		t.Errorf("progress line = %s\nwant it to contain %s", progress[0], want)
	}
	want = `msg="caches synced; kreact is running"`
	if !strings.Contains(last, want) {
		t.Fatalf("last line = %s\nwant %s", last, want)
	}
	want = `objects=3005 informers="configmaps.v1 in namespace \"x\": synced, 3000 objects; pods.v1: synced, 5 objects"`
	if !strings.Contains(last, want) {
		t.Errorf("synced line = %s\nwant it to contain %s", last, want)
	}
	if logs.Count("rule waiting for its resources", "rule=c") != 1 {
		t.Errorf("the waiting rule is not named once:\n%s", logs)
	}
	if logs.Count("caches synced") != 1 {
		t.Errorf("\"caches synced\" logged %d times, want once", logs.Count("caches synced"))
	}
}

func TestWaitForSyncEndsWithContext(t *testing.T) {
	var f fakeSync
	logs := &testcluster.LogBuffer{}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	engine.WaitForSync(ctx, slog.New(slog.NewTextHandler(logs, nil)), f.view(), time.Millisecond, time.Hour)
	if logs.Count("caches synced") != 0 {
		t.Errorf("synced logged although rule a never caught up:\n%s", logs)
	}
}

// TestWaitForSyncWaitsForTheInitialAdds: after the caches synced,
// WaitForSync returns once the rules have no calls waiting (their initial
// adds handled), with Go's collector as it found it.
func TestWaitForSyncWaitsForTheInitialAdds(t *testing.T) {
	t.Setenv("GOGC", "")
	var queued atomic.Int64
	queued.Store(3)
	var gcDuring atomic.Int64
	view := engine.SyncView{
		Rules: func() []engine.Status {
			gcDuring.Store(int64(gcPercent()))
			return []engine.Status{{Rule: "a", Running: true, Synced: true, Queued: int(queued.Load())}}
		},
		Informers: func() []dynamicinformer.WatchStatus { return nil },
	}
	before := gcPercent()
	done := make(chan struct{})
	logs := &testcluster.LogBuffer{}
	go func() {
		defer close(done)
		engine.WaitForSync(t.Context(), slog.New(slog.NewTextHandler(logs, nil)), view, time.Millisecond, time.Hour)
	}()
	testcluster.Eventually(t, "the caches synced line", func() bool { return logs.Count("caches synced") == 1 })
	select {
	case <-done:
		t.Fatal("WaitForSync returned while calls were waiting")
	case <-time.After(20 * time.Millisecond):
	}
	if got := gcDuring.Load(); got != 25 {
		t.Errorf("GOGC during the sync = %d, want 25", got)
	}
	queued.Store(0)
	<-done
	if after := gcPercent(); after != before {
		t.Errorf("GOGC after the sync = %d, want %d as before", after, before)
	}
}

// gcPercent reads Go's GOGC setting, which only SetGCPercent returns.
func gcPercent() int {
	old := debug.SetGCPercent(-1)
	debug.SetGCPercent(old)
	return old
}
