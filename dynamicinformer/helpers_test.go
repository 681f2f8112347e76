package dynamicinformer

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// checkLeaks fails t if goroutines started during the test outlive it.
// Call it first, so that its cleanup runs after every other one.
func checkLeaks(t *testing.T) {
	t.Helper()
	leaktest.Check(t)
}

// fakeSource is a discovery.Source whose snapshot the test sets.
type fakeSource struct {
	mu        sync.Mutex
	snap      *discovery.Snapshot
	subs      map[int]func(discovery.Diff)
	next      int
	refreshes atomic.Int64
	unsynced  atomic.Bool
	// onSubscribe, if set, runs at the start of Subscribe.
	onSubscribe func()
	// deliver serialises diffs, as the real source's single goroutine does.
	deliver sync.Mutex
}

var _ discovery.Source = (*fakeSource)(nil)

func newFakeSource(rs ...apiresource.Resource) *fakeSource {
	return &fakeSource{snap: &discovery.Snapshot{Resources: rs}, subs: map[int]func(discovery.Diff){}}
}

func (f *fakeSource) Snapshot() *discovery.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap
}

func (f *fakeSource) Subscribe(fn func(discovery.Diff)) func() {
	if f.onSubscribe != nil {
		f.onSubscribe()
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	id := f.next
	f.next++
	f.subs[id] = fn
	return func() {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.subs, id)
	}
}

func (f *fakeSource) RequestRefresh() { f.refreshes.Add(1) }

// HasSynced is false while unsynced is set, like a discovery.Cache before
// its first refresh.
func (f *fakeSource) HasSynced() bool { return !f.unsynced.Load() }

func (f *fakeSource) subscribers() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.subs)
}

// add publishes r; remove withdraws the resources served at gvrs.
func (f *fakeSource) add(r apiresource.Resource) {
	f.update(func(rs []apiresource.Resource) ([]apiresource.Resource, discovery.Diff) {
		return append(rs, r), discovery.Diff{Added: []apiresource.Resource{r}}
	})
}

func (f *fakeSource) remove(gvr schema.GroupVersionResource) {
	f.update(func(rs []apiresource.Resource) ([]apiresource.Resource, discovery.Diff) {
		var keep, gone []apiresource.Resource
		for _, r := range rs {
			if r.GVR == gvr {
				gone = append(gone, r)
			} else {
				keep = append(keep, r)
			}
		}
		return keep, discovery.Diff{Removed: gone}
	})
}

func (f *fakeSource) update(change func([]apiresource.Resource) ([]apiresource.Resource, discovery.Diff)) {
	f.deliver.Lock()
	defer f.deliver.Unlock()
	f.mu.Lock()
	rs, d := change(append([]apiresource.Resource(nil), f.snap.Resources...))
	f.snap = &discovery.Snapshot{Resources: rs}
	fns := make([]func(discovery.Diff), 0, len(f.subs))
	for _, fn := range f.subs {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	for _, fn := range fns {
		fn(d)
	}
}

// event is one handler call as a recorder saw it.
type event struct {
	Type      string // add, update, delete
	Namespace string
	Name      string
	Initial   bool
	RV        string
}

// recorder is a cache.ResourceEventHandler that keeps every call and
// checks that calls never overlap.
type recorder struct {
	mu      sync.Mutex
	events  []event
	running atomic.Int32
	overlap atomic.Bool
}

func (r *recorder) record(typ string, obj any, initial bool) {
	if r.running.Add(1) != 1 {
		r.overlap.Store(true)
	}
	defer r.running.Add(-1)
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, _ := obj.(*unstructured.Unstructured)
	e := event{Type: typ, Initial: initial}
	if u != nil {
		e.Namespace, e.Name, e.RV = u.GetNamespace(), u.GetName(), u.GetResourceVersion()
	}
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) OnAdd(obj any, initial bool) { r.record("add", obj, initial) }
func (r *recorder) OnUpdate(_, obj any)         { r.record("update", obj, false) }
func (r *recorder) OnDelete(obj any)            { r.record("delete", obj, false) }

func (r *recorder) snapshot() []event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]event(nil), r.events...)
}

// count returns how many events match typ and name ("" matches any).
func (r *recorder) count(typ, name string) int {
	n := 0
	for _, e := range r.snapshot() {
		if (typ == "" || e.Type == typ) && (name == "" || e.Name == name) {
			n++
		}
	}
	return n
}

func (r *recorder) names() map[string]int {
	out := map[string]int{}
	for _, e := range r.snapshot() {
		out[e.Namespace+"/"+e.Name]++
	}
	return out
}

func newTestLogger(t *testing.T) (*slog.Logger, *testcluster.LogBuffer) {
	b := &testcluster.LogBuffer{}
	t.Cleanup(func() {
		if t.Failed() || os.Getenv("KREACT_TEST_LOGS") != "" {
			t.Logf("log:\n%s", b.String())
		}
	})
	return slog.New(slog.NewTextHandler(b, &slog.HandlerOptions{Level: slog.LevelDebug})), b
}

// runManager runs m until the test ends and checks that Run returns nil.
func runManager(t *testing.T, m *Manager) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-errc; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func waitPhase(t *testing.T, w *Watch, p Phase) {
	t.Helper()
	testcluster.Eventually(t, fmt.Sprintf("%s to be %s", w.Key(), p), func() bool { return w.State().Phase == p })
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
