//go:build e2e

package dynamicinformer

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// relabelCM sets the labels of a ConfigMap and returns it as it was
// before and after.
func relabelCM(t *testing.T, client dynamic.Interface, ns, name string, lbls map[string]string) (before, after *unstructured.Unstructured) {
	t.Helper()
	ri := client.Resource(cmGVR).Namespace(ns)
	before, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	obj := before.DeepCopy()
	obj.SetLabels(lbls)
	after, err = ri.Update(t.Context(), obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("relabel configmap %s/%s: %v", ns, name, err)
	}
	return before, after
}

// TestE2ELabelSelectorsShareAnInformer: two Watches with different label
// selectors on one resource share one informer, which lists and watches
// every object once; each receives exactly the objects its selector
// selects, with the server's meaning (an object relabelled out of one
// selector and into the other is a delete of its old state for the
// first, an add for the second), and reads through each return only
// its objects.
func TestE2ELabelSelectorsShareAnInformer(t *testing.T) {
	checkLeaks(t)
	s := startE2E(t, nil, Options{})
	ns := createNamespace(t, s.admin, "share-sel")
	a, b := map[string]string{"app": "a"}, map[string]string{"app": "b"}
	mustCreateCM(t, s.admin, ns, "a-1", a)
	mustCreateCM(t, s.admin, ns, "b-1", b)
	mustCreateCM(t, s.admin, ns, "none-1", nil)

	recA, recB := &recorder{}, &recorder{}
	wA := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: ns, LabelSelector: "app=a"}, "rule-a", recA)
	wB := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: ns, LabelSelector: "app = b"}, "rule-b", recB)
	testcluster.Eventually(t, "both watches to sync", func() bool { return wA.HasSynced() && wB.HasSynced() })
	testcluster.Eventually(t, "one informer without a server-side selector", func() bool {
		st := s.m.Status()
		return len(st) == 1 && st[0].Key.LabelSelector == "" && st[0].Synced
	})
	st := s.m.Status()[0]
	if want := []string{"app=a", "app=b"}; !slices.Equal(st.LabelSelectors, want) || !slices.Equal(st.Owners, []string{"rule-a", "rule-b"}) {
		t.Errorf("Status() = %+v, want one informer with selectors %v and both owners", st, want)
	}
	if wB.Key().LabelSelector != "app=b" {
		t.Errorf("wB.Key().LabelSelector = %q, want its own, normalised", wB.Key().LabelSelector)
	}

	// Reads through each Watch hold its objects only.
	for _, c := range []struct {
		w         *Watch
		mine, not string
	}{{wA, "a-1", "b-1"}, {wB, "b-1", "a-1"}} {
		list, err := c.w.List("", nil)
		if err != nil || len(list) != 1 || list[0].GetName() != c.mine {
			t.Errorf("%s List = %v, %v; want only %s", c.w.Owner(), names(list), err, c.mine)
		}
		if _, found, err := c.w.Get(ns, c.mine); !found || err != nil {
			t.Errorf("%s Get(%s) = %v, %v; want found", c.w.Owner(), c.mine, found, err)
		}
		for _, other := range []string{c.not, "none-1"} {
			if _, found, err := c.w.Get(ns, other); found || err != nil {
				t.Errorf("%s Get(%s) = %v, %v; want not found", c.w.Owner(), other, found, err)
			}
		}
	}

	// a-1 moves from a to b; none-1 changes outside both; then a barrier
	// in each (events arrive in resource-version order).
	beforeMove, afterMove := relabelCM(t, s.admin, ns, "a-1", b)
	mustUpdateCM(t, s.admin, ns, "none-1", "changed")
	mustCreateCM(t, s.admin, ns, "none-2", map[string]string{"app": "c"})
	mustUpdateCM(t, s.admin, ns, "b-1", "changed")
	mustCreateCM(t, s.admin, ns, "a-2", a)
	testcluster.Eventually(t, "the barriers", func() bool {
		return recA.count("add", "a-2") == 1 && recB.count("update", "b-1") == 1
	})
	wantA := []event{
		{Type: "add", Namespace: ns, Name: "a-1", Initial: true},
		{Type: "delete", Namespace: ns, Name: "a-1", RV: beforeMove.GetResourceVersion()},
		{Type: "add", Namespace: ns, Name: "a-2"},
	}
	wantB := []event{
		{Type: "add", Namespace: ns, Name: "b-1", Initial: true},
		{Type: "add", Namespace: ns, Name: "a-1", RV: afterMove.GetResourceVersion()},
		{Type: "update", Namespace: ns, Name: "b-1"},
	}
	for name, c := range map[string]struct {
		rec  *recorder
		want []event
	}{"rule-a": {recA, wantA}, "rule-b": {recB, wantB}} {
		got := c.rec.snapshot()
		for i := range got {
			if i < len(c.want) && c.want[i].RV == "" {
				got[i].RV = ""
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%s got\n  %+v\nwant\n  %+v", name, got, c.want)
		}
		if c.rec.overlap.Load() {
			t.Errorf("%s: handler calls overlapped", name)
		}
	}
}

// TestE2ELabelSelectorGoesToTheServer: Watches that all have the same
// label selector send it to the server; a Watch with another selector
// joining while objects are created, changed and deleted restarts the
// informer without one, and the Watches already on it neither lose nor
// repeat an event: replayed in order, each one's events leave it with
// exactly the objects that exist and match, at their last state.
func TestE2ELabelSelectorGoesToTheServer(t *testing.T) {
	checkLeaks(t)
	var hooked *hookedClient
	s := startE2E(t, nil, Options{}, func(c dynamic.Interface) dynamic.Interface {
		hooked = &hookedClient{Interface: c}
		return hooked
	})
	ns := createNamespace(t, s.admin, "server-sel")
	x, y := map[string]string{"app": "x"}, map[string]string{"app": "y"}
	for i := range 20 {
		mustCreateCM(t, s.admin, ns, fmt.Sprintf("pre-%d", i), x)
		mustCreateCM(t, s.admin, ns, fmt.Sprintf("other-%d", i), y)
	}
	key := Key{GVR: cmGVR, Namespace: ns, LabelSelector: "app=x"}
	rec1, rec2 := &recorder{}, &recorder{}
	w1 := mustWatch(t, s.m, key, "first", rec1)
	w2 := mustWatch(t, s.m, key, "second", rec2)
	testcluster.Eventually(t, "both watches to sync", func() bool { return w1.HasSynced() && w2.HasSynced() })
	if got := hooked.listSelectors(); !slices.Equal(got, []string{"app=x"}) {
		t.Fatalf("initial lists' label selectors = %q, want one list with app=x (sent to the server)", got)
	}
	if st := s.m.Status(); len(st) != 1 || st[0].Key.LabelSelector != "app=x" {
		t.Errorf("Status() = %+v, want one informer selecting app=x on the server", st)
	}

	// The writes: creates, updates, relabels out of the selector and
	// deletes, before, during and after the third Watch's join.
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	var writeErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		ri := s.admin.Resource(cmGVR).Namespace(ns)
		for i := 0; ctx.Err() == nil; i++ {
			if _, err := createCM(ctx, s.admin, ns, "w-"+strconv.Itoa(i), x); err != nil {
				writeErr = err
				return
			}
			if i >= 1 {
				obj, err := ri.Get(ctx, "w-"+strconv.Itoa(i-1), metav1.GetOptions{})
				if err == nil {
					_ = unstructured.SetNestedField(obj.Object, "v"+strconv.Itoa(i), "data", "k")
					if i%5 == 0 {
						obj.SetLabels(y)
					}
					_, err = ri.Update(ctx, obj, metav1.UpdateOptions{})
				}
				if err != nil {
					writeErr = err
					return
				}
			}
			if i >= 2 && i%3 == 0 {
				if err := ri.Delete(ctx, "w-"+strconv.Itoa(i-2), metav1.DeleteOptions{}); err != nil {
					writeErr = err
					return
				}
			}
		}
	}()
	testcluster.Eventually(t, "the writes to start", func() bool { return rec1.count("add", "w-10") > 0 })
	rec3 := &recorder{}
	w3 := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: ns, LabelSelector: "app=y"}, "third", rec3)
	testcluster.Eventually(t, "the third watch to sync", w3.HasSynced)
	testcluster.Eventually(t, "the first two to sync again", func() bool { return w1.HasSynced() && w2.HasSynced() })
	n := rec1.count("add", "")
	testcluster.Eventually(t, "more writes after the join", func() bool { return rec1.count("add", "") > n+10 })
	cancel()
	wg.Wait()
	if writeErr != nil && ctx.Err() == nil {
		t.Fatal(writeErr)
	}
	if got := hooked.listSelectors(); !slices.Equal(got, []string{"app=x", ""}) {
		t.Errorf("initial lists' label selectors = %q, want app=x, then none", got)
	}
	if st := s.m.Status(); len(st) != 1 || st[0].Key.LabelSelector != "" {
		t.Errorf("Status() = %+v, want one informer without a server-side selector", st)
	}

	mustCreateCM(t, s.admin, ns, "barrier", x)
	mustCreateCM(t, s.admin, ns, "barrier-y", y)
	testcluster.Eventually(t, "the barriers", func() bool {
		return rec1.count("add", "barrier") == 1 && rec2.count("add", "barrier") == 1 && rec3.count("add", "barrier-y") == 1
	})

	list, err := s.admin.Resource(cmGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]map[string]string{"app=x": {}, "app=y": {}}
	for _, o := range list.Items {
		sel := "app=" + o.GetLabels()["app"]
		truth[sel][o.GetName()] = o.GetResourceVersion()
	}
	for name, c := range map[string]struct {
		rec *recorder
		sel string
	}{"first": {rec1, "app=x"}, "second": {rec2, "app=x"}, "third": {rec3, "app=y"}} {
		if c.rec.overlap.Load() {
			t.Errorf("%s: handler calls overlapped", name)
		}
		held := map[string]string{}
		for i, e := range c.rec.snapshot() {
			rv, ok := held[e.Name]
			switch {
			case e.Type == "add" && ok:
				t.Errorf("%s event %d %+v: an add of an object it holds (at %s): repeated", name, i, e, rv)
			case e.Type != "add" && !ok:
				t.Errorf("%s event %d %+v: of an object it does not hold", name, i, e)
			case e.Type == "update" && e.RV == rv:
				t.Errorf("%s event %d %+v: an update to the state it holds: repeated", name, i, e)
			}
			if e.Type == "delete" {
				delete(held, e.Name)
			} else {
				held[e.Name] = e.RV
			}
		}
		if fmt.Sprint(held) != fmt.Sprint(truth[c.sel]) {
			t.Errorf("%s holds, after its events,\n  %v\nthe server has for %s\n  %v", name, held, c.sel, truth[c.sel])
		}
	}
}

func names(list []*unstructured.Unstructured) []string {
	var out []string
	for _, u := range list {
		out = append(out, u.GetName())
	}
	return out
}
