//go:build e2e

package dynamicinformer

import (
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/shard"
)

// fakeShards is a Shards whose range the test sets.
type fakeShards struct {
	mu   sync.Mutex
	rng  shard.Range
	owns bool
	subs map[int]func()
	next int
}

func (f *fakeShards) Range() (shard.Range, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rng, f.owns
}

func (f *fakeShards) Subscribe(fn func()) func() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.subs == nil {
		f.subs = map[int]func(){}
	}
	id := f.next
	f.next++
	f.subs[id] = fn
	return func() { f.mu.Lock(); delete(f.subs, id); f.mu.Unlock() }
}

func (f *fakeShards) set(rng shard.Range, owns bool) {
	f.mu.Lock()
	f.rng, f.owns = rng, owns
	fns := make([]func(), 0, len(f.subs))
	for _, fn := range f.subs {
		fns = append(fns, fn)
	}
	f.mu.Unlock()
	for _, fn := range fns {
		fn()
	}
}

var (
	lowerHalf = shard.Range{Start: 0, End: 1 << 63}
	upperHalf = shard.Range{Start: 1 << 63, End: 0}
)

// TestE2ESharded runs a sharded informer against the package's API server
// (ShardedListAndWatch off: the informer filters) and one with the gate on
// (the server filters): both hold exactly the objects whose UID hashes
// into the range, and a range change restarts the informer on the new
// range, the objects it gained arriving as initial adds and those it kept
// not replayed.
func TestE2ESharded(t *testing.T) {
	gated, err := testcluster.Start(testcluster.Options{FeatureGates: map[string]bool{"ShardedListAndWatch": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gated.Stop() })
	for _, tc := range []struct {
		cluster *testcluster.Cluster
		mode    ShardMode
	}{
		{cluster, ShardClient},
		{gated, ShardServer},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			checkLeaks(t)
			admin := dynamic.NewForConfigOrDie(tc.cluster.Config())
			ns := createNamespace(t, admin, "sharded")
			in := map[shard.Range][]string{}
			for i := range 40 {
				obj := mustCreateCM(t, admin, ns, fmt.Sprintf("cm-%d", i), nil)
				for _, r := range []shard.Range{lowerHalf, upperHalf} {
					if r.Contains(shard.Hash(string(obj.GetUID()))) {
						in[r] = append(in[r], ns+"/"+obj.GetName())
					}
				}
			}
			if len(in[lowerHalf]) == 0 || len(in[upperHalf]) == 0 {
				t.Fatalf("all objects on one side: %d / %d", len(in[lowerHalf]), len(in[upperHalf]))
			}

			shards := &fakeShards{rng: lowerHalf, owns: true}
			log, logs := newTestLogger(t)
			m := New(dynamic.NewForConfigOrDie(tc.cluster.Config()), newFakeSource(cmResource),
				Options{Logger: log, Shards: shards, RetryPeriod: time.Second})
			runManager(t, m)
			rec := &recorder{}
			w := mustWatch(t, m, Key{GVR: cmGVR, Namespace: ns, Sharded: true}, "sharded", rec)

			holds := func(want []string) func() bool {
				return func() bool {
					if !w.HasSynced() {
						return false
					}
					objs, err := w.List(ns, labels.Everything())
					if err != nil {
						return false
					}
					var got []string
					for _, o := range objs {
						got = append(got, o.GetNamespace()+"/"+o.GetName())
					}
					slices.Sort(got)
					return slices.Equal(got, want)
				}
			}
			slices.Sort(in[lowerHalf])
			slices.Sort(in[upperHalf])
			testcluster.Eventually(t, "the lower half in the cache", holds(in[lowerHalf]))
			for name := range rec.names() {
				if !slices.Contains(in[lowerHalf], name) {
					t.Errorf("handler got %s, outside the range", name)
				}
			}
			st := m.Status()[0]
			if st.Shard != tc.mode {
				t.Errorf("mode = %q, want %q", st.Shard, tc.mode)
			}
			if tc.mode == ShardServer && st.ShardFiltered != 0 {
				t.Errorf("server mode: %d objects filtered on the client, want 0", st.ShardFiltered)
			}
			if tc.mode == ShardClient && st.ShardFiltered == 0 {
				t.Error("client mode: nothing filtered on the client")
			}
			if logs.Count(`msg="sharded informer"`, "mode="+string(tc.mode)) == 0 {
				t.Errorf("no log line names the mode:\n%s", logs.String())
			}

			// A new range: the gained objects arrive as initial adds.
			shards.set(upperHalf, true)
			testcluster.Eventually(t, "the upper half in the cache", holds(in[upperHalf]))
			for _, name := range in[upperHalf] {
				n := 0
				for _, e := range rec.snapshot() {
					if e.Type == "add" && e.Initial && e.Namespace+"/"+e.Name == name {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%s: %d initial adds after the range change, want 1", name, n)
				}
			}
			// Changes to objects that left the range are no longer delivered.
			before := len(rec.snapshot())
			lost := in[lowerHalf][0]
			mustUpdateCM(t, admin, ns, lost[len(ns)+1:], "changed")
			gained := in[upperHalf][0]
			mustUpdateCM(t, admin, ns, gained[len(ns)+1:], "changed")
			testcluster.Eventually(t, "the update of a gained object", func() bool { return rec.count("update", gained[len(ns)+1:]) == 1 })
			for _, e := range rec.snapshot()[before:] {
				if e.Namespace+"/"+e.Name == lost {
					t.Errorf("%s delivered after it left the range: %+v", lost, e)
				}
			}

			// The whole space: the informer restarts again, and only the
			// objects the handler was not given on the last range (the
			// lower half, which moved away and back) arrive as initial
			// adds; the upper half, kept, is not replayed.
			before = len(rec.snapshot())
			shards.set(shard.Range{}, true)
			all := slices.Sorted(slices.Values(append(slices.Clone(in[lowerHalf]), in[upperHalf]...)))
			testcluster.Eventually(t, "every object in the cache", holds(all))
			testcluster.Eventually(t, "the lower half added again", func() bool {
				n := 0
				for _, e := range rec.snapshot()[before:] {
					if e.Type == "add" && e.Initial && slices.Contains(in[lowerHalf], e.Namespace+"/"+e.Name) {
						n++
					}
				}
				return n == len(in[lowerHalf])
			})
			for _, e := range rec.snapshot()[before:] {
				if slices.Contains(in[upperHalf], e.Namespace+"/"+e.Name) {
					t.Errorf("%s/%s, kept across the range change, was delivered again: %+v", e.Namespace, e.Name, e)
				}
			}

			// Owning nothing stops the informer.
			shards.set(shard.Range{}, false)
			testcluster.Eventually(t, "the informer to stop", func() bool {
				s := m.Status()[0]
				return s.Shard == ShardNone && s.Phase == PhasePending
			})
			if rec.overlap.Load() {
				t.Error("handler calls overlapped")
			}
		})
	}
}
