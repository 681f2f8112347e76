package dynamicinformer

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/projection"
)

// These tests use client-go's fake dynamic client and a fake discovery
// source: they cover the manager's own logic (sharing, reference counting,
// pending and removed resources, preflight errors, the start gate). What
// the server does with selectors, watches and permissions is covered by
// the e2e tests against a real API server.

var (
	cmGVR     = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	widgetGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}
	thingGVR  = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "clusterthings"}
)

func resourceFor(gvr schema.GroupVersionResource, kind string, namespaced bool) apiresource.Resource {
	return apiresource.Resource{GVR: gvr, Kind: kind, Namespaced: namespaced, Verbs: []string{"get", "list", "watch"}}
}

var (
	cmResource     = resourceFor(cmGVR, "ConfigMap", true)
	widgetResource = resourceFor(widgetGVR, "Widget", true)
	thingResource  = resourceFor(thingGVR, "ClusterThing", false)
)

func newObj(apiVersion, kind, ns, name string, lbls map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(lbls)
	return u
}

func cmObj(ns, name string) *unstructured.Unstructured {
	return newObj("v1", "ConfigMap", ns, name, nil)
}

func newFakeClient(objs ...runtime.Object) *dynamicfake.FakeDynamicClient {
	return dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		cmGVR: "ConfigMapList", widgetGVR: "WidgetList", thingGVR: "ClusterThingList",
	}, objs...)
}

// hookedClient wraps a dynamic client to count and slow down lists. The
// fake client runs its reactors under one lock, so concurrency can only be
// observed out here.
type hookedClient struct {
	dynamic.Interface
	delay       time.Duration
	inflight    atomic.Int32
	maxInflight atomic.Int32
	// initialLists counts informer starts: lists other than the
	// preflight's Limit=1, and streaming watch-lists.
	initialLists atomic.Int32

	mu sync.Mutex
	// selectors are the label selectors of the initial lists, in order.
	selectors []string
}

// listSelectors returns the label selectors the initial lists sent.
func (c *hookedClient) listSelectors() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.selectors)
}

func (c *hookedClient) initialList(opts metav1.ListOptions) {
	c.initialLists.Add(1)
	c.mu.Lock()
	c.selectors = append(c.selectors, opts.LabelSelector)
	c.mu.Unlock()
}

// IsWatchListSemanticsUnSupported keeps the wrapped client's answer
// visible to client-go's reflector.
func (c *hookedClient) IsWatchListSemanticsUnSupported() bool {
	u, ok := c.Interface.(interface{ IsWatchListSemanticsUnSupported() bool })
	return ok && u.IsWatchListSemanticsUnSupported()
}

func (c *hookedClient) Resource(gvr schema.GroupVersionResource) dynamic.NamespaceableResourceInterface {
	return hookedNamespaceable{c.Interface.Resource(gvr), c}
}

type hookedNamespaceable struct {
	dynamic.NamespaceableResourceInterface
	c *hookedClient
}

func (r hookedNamespaceable) Namespace(ns string) dynamic.ResourceInterface {
	return hookedResource{r.NamespaceableResourceInterface.Namespace(ns), r.c}
}

func (r hookedNamespaceable) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.c.list(ctx, r.NamespaceableResourceInterface, opts)
}

type hookedResource struct {
	dynamic.ResourceInterface
	c *hookedClient
}

func (r hookedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	return r.c.list(ctx, r.ResourceInterface, opts)
}

func (r hookedNamespaceable) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	r.c.watch(opts)
	return r.NamespaceableResourceInterface.Watch(ctx, opts)
}

func (r hookedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	r.c.watch(opts)
	return r.ResourceInterface.Watch(ctx, opts)
}

func (c *hookedClient) watch(opts metav1.ListOptions) {
	if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
		c.initialList(opts)
	}
}

func (c *hookedClient) list(ctx context.Context, ri dynamic.ResourceInterface, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	n := c.inflight.Add(1)
	defer c.inflight.Add(-1)
	for {
		m := c.maxInflight.Load()
		if n <= m || c.maxInflight.CompareAndSwap(m, n) {
			break
		}
	}
	if opts.Limit != 1 {
		c.initialList(opts)
	}
	if c.delay > 0 {
		time.Sleep(c.delay)
	}
	return ri.List(ctx, opts)
}

func mustWatch(t *testing.T, m *Manager, key Key, owner string, h *recorder) *Watch {
	t.Helper()
	w, err := m.Watch(key, owner, h)
	if err != nil {
		t.Fatalf("Watch(%s): %v", key, err)
	}
	return w
}

func TestPendingWatchStartsWhenResourceAppears(t *testing.T) {
	checkLeaks(t)
	log, logs := newTestLogger(t)
	src := newFakeSource()
	client := newFakeClient(cmObj("ns1", "a"), cmObj("ns1", "b"), cmObj("ns2", "c"))
	m := New(client, src, Options{Logger: log})
	rec := &recorder{}
	w := mustWatch(t, m, Key{GVR: cmGVR}, "rule-a", rec)
	runManager(t, m)

	testcluster.Eventually(t, "the pending watch to be logged", func() bool { return logs.Count("waiting for resource to appear") == 1 })
	if s := w.State(); s.Phase != PhasePending || w.HasSynced() {
		t.Fatalf("State() = %v, HasSynced() = %v; want pending, false", s, w.HasSynced())
	}
	if src.refreshes.Load() == 0 {
		t.Error("a pending watch did not ask discovery for a refresh")
	}
	if _, _, err := w.Get("ns1", "a"); !errors.Is(err, ErrNoCache) {
		t.Errorf("Get while pending: err = %v, want ErrNoCache", err)
	}

	src.add(cmResource)
	testcluster.Eventually(t, "the handler to sync", w.HasSynced)
	if s := w.State(); s.Phase != PhaseSynced {
		t.Fatalf("State() = %v, want synced", s)
	}
	got := rec.snapshot()
	if len(got) != 3 {
		t.Fatalf("events = %+v, want 3 initial adds", got)
	}
	for _, e := range got {
		if e.Type != "add" || !e.Initial {
			t.Errorf("event %+v, want an initial add", e)
		}
	}
	if n := logs.Count("waiting for resource to appear"); n != 1 {
		t.Errorf("'waiting' logged %d times, want 1", n)
	}

	obj, ok, err := w.Get("ns1", "a")
	if err != nil || !ok || obj.GetName() != "a" {
		t.Errorf("Get(ns1, a) = %v, %v, %v", obj, ok, err)
	}
	if _, ok, err := w.Get("ns1", "zzz"); ok || err != nil {
		t.Errorf("Get(ns1, zzz) = %v, %v; want not found, no error", ok, err)
	}
	all, err := w.List("", nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, o := range all {
		names = append(names, o.GetNamespace()+"/"+o.GetName())
	}
	if want := []string{"ns1/a", "ns1/b", "ns2/c"}; !slices.Equal(names, want) {
		t.Errorf("List(all) = %v, want %v", names, want)
	}
	if ns2, _ := w.List("ns2", labels.Everything()); len(ns2) != 1 {
		t.Errorf("List(ns2) = %d objects, want 1", len(ns2))
	}
}

func TestPendingBeforeDiscoveryAnswers(t *testing.T) {
	checkLeaks(t)
	log, logs := newTestLogger(t)
	src := newFakeSource()
	src.unsynced.Store(true)
	m := New(newFakeClient(), src, Options{Logger: log})
	w := mustWatch(t, m, Key{GVR: widgetGVR}, "rule", &recorder{})
	runManager(t, m)

	// Discovery's first answer does not list widgets: now the watch says
	// what it waits for, once.
	src.unsynced.Store(false)
	src.add(cmResource)
	testcluster.Eventually(t, "the pending watch to be logged", func() bool { return logs.Count("waiting for resource to appear", "owners=[rule]") == 1 })
	src.add(thingResource)
	src.add(widgetResource)
	testcluster.Eventually(t, "sync", w.HasSynced)
	if n := logs.Count("waiting for resource to appear"); n != 1 {
		t.Errorf("'waiting' logged %d times, want 1", n)
	}
}

func TestWatchesOnOneKeyShareOneInformer(t *testing.T) {
	checkLeaks(t)
	log, _ := newTestLogger(t)
	fake := newFakeClient(
		newObj("v1", "ConfigMap", "ns", "a", map[string]string{"a": "1", "b": "2"}),
		newObj("v1", "ConfigMap", "ns", "b", map[string]string{"a": "1", "b": "2"}),
		newObj("v1", "ConfigMap", "ns", "other", nil),
	)
	client := &hookedClient{Interface: fake}
	m := New(client, newFakeSource(cmResource), Options{Logger: log})
	runManager(t, m)

	rec1, rec2 := &recorder{}, &recorder{}
	// Equivalent selectors written differently share the informer.
	w1 := mustWatch(t, m, Key{GVR: cmGVR, LabelSelector: "a=1,b=2"}, "one", rec1)
	testcluster.Eventually(t, "w1 to sync", w1.HasSynced)
	w2 := mustWatch(t, m, Key{GVR: cmGVR, LabelSelector: "b=2, a=1"}, "two", rec2)
	testcluster.Eventually(t, "w2 to sync", w2.HasSynced)

	if w1.Key() != w2.Key() {
		t.Fatalf("keys differ: %v and %v", w1.Key(), w2.Key())
	}
	// Status counts objects as they are delivered: it may lag a moment.
	testcluster.Eventually(t, "Status to show one synced informer with owners one, two and 2 objects", func() bool {
		st := m.Status()
		return len(st) == 1 && slices.Equal(st[0].Owners, []string{"one", "two"}) && st[0].Objects == 2 && st[0].Synced && st[0].Phase == PhaseSynced
	})
	if n := client.initialLists.Load(); n != 1 {
		t.Fatalf("informer lists = %d, want 1", n)
	}
	// The late subscriber was replayed the cache as initial adds.
	for _, rec := range []*recorder{rec1, rec2} {
		got := rec.snapshot()
		if len(got) != 2 || !got[0].Initial || !got[1].Initial {
			t.Errorf("events = %+v, want 2 initial adds", got)
		}
	}

	w1.Stop()
	w1.Stop() // idempotent
	if s := w1.State(); s.Phase != PhaseStopped {
		t.Errorf("stopped watch State() = %v", s)
	}
	if _, err := w1.List("", nil); !errors.Is(err, ErrNoCache) {
		t.Errorf("List on a stopped watch: err = %v, want ErrNoCache", err)
	}
	if st := m.Status(); len(st) != 1 || !slices.Equal(st[0].Owners, []string{"two"}) {
		t.Fatalf("after one Stop, Status() = %+v", st)
	}
	if !w2.HasSynced() {
		t.Error("w2 lost its sync when w1 stopped")
	}

	w2.Stop()
	if st := m.Status(); len(st) != 0 {
		t.Fatalf("after the last Stop, Status() = %+v, want none", st)
	}
	// A new watch on the key gets a new informer.
	w3 := mustWatch(t, m, Key{GVR: cmGVR, LabelSelector: "a=1,b=2"}, "three", &recorder{})
	testcluster.Eventually(t, "w3 to sync", w3.HasSynced)
	if n := client.initialLists.Load(); n != 2 {
		t.Fatalf("informer lists = %d, want 2", n)
	}
}

func TestRemovedResourceStopsInformerAndComesBack(t *testing.T) {
	checkLeaks(t)
	log, logs := newTestLogger(t)
	fake := newFakeClient(newObj("example.com/v1", "Widget", "ns", "w1", nil))
	client := &hookedClient{Interface: fake}
	src := newFakeSource(widgetResource)
	m := New(client, src, Options{Logger: log})
	runManager(t, m)
	rec := &recorder{}
	w := mustWatch(t, m, Key{GVR: widgetGVR}, "rule", rec)
	testcluster.Eventually(t, "sync", w.HasSynced)

	src.remove(widgetGVR)
	waitPhase(t, w, PhasePending)
	if w.HasSynced() {
		t.Error("HasSynced() true after the resource went away")
	}
	if _, _, err := w.Get("ns", "w1"); !errors.Is(err, ErrNoCache) {
		t.Errorf("Get: err = %v, want ErrNoCache", err)
	}
	testcluster.Eventually(t, "the removal to be logged", func() bool { return logs.Count("no longer served") == 1 })
	if st := m.Status(); len(st) != 1 || st[0].Objects != 0 || st[0].Synced {
		t.Errorf("Status() = %+v, want one pending informer with no cache", st)
	}

	if _, err := fake.Resource(widgetGVR).Namespace("ns").Create(t.Context(), newObj("example.com/v1", "Widget", "ns", "w2", nil), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	src.add(widgetResource)
	testcluster.Eventually(t, "resync after the resource came back", w.HasSynced)
	if n := client.initialLists.Load(); n != 2 {
		t.Errorf("informer lists = %d, want 2 (a new informer)", n)
	}
	if got := rec.names(); got["ns/w1"] != 2 || got["ns/w2"] != 1 {
		t.Errorf("events per object = %v, want w1 twice (one per informer), w2 once", got)
	}
	if rec.overlap.Load() {
		t.Error("handler calls overlapped")
	}
	if n := logs.Count("no longer served"); n != 1 {
		t.Errorf("removal logged %d times, want 1", n)
	}
	if n := logs.Count("level=WARN") + logs.Count("level=ERROR"); n != 0 {
		t.Errorf("%d warnings or errors logged, want 0", n)
	}
}

func forbidden(verb string, gr schema.GroupResource, ns string) error {
	return apierrors.NewForbidden(gr, "", fmt.Errorf("User %q cannot %s resource %q in API group %q in the namespace %q", "nobody", verb, gr.Resource, gr.Group, ns))
}

func TestForbiddenListIsReportedAndHealsWhenGranted(t *testing.T) {
	checkLeaks(t)
	log, logs := newTestLogger(t)
	fake := newFakeClient(cmObj("x", "a"), cmObj("y", "b"))
	var denied atomic.Bool
	var deniedLists atomic.Int32
	denied.Store(true)
	fake.PrependReactor("list", "configmaps", func(a clienttesting.Action) (bool, runtime.Object, error) {
		if denied.Load() && a.GetNamespace() == "x" {
			deniedLists.Add(1)
			return true, nil, forbidden("list", cmGVR.GroupResource(), "x")
		}
		return false, nil, nil
	})
	m := New(fake, newFakeSource(cmResource), Options{Logger: log, RetryPeriod: 20 * time.Millisecond})
	runManager(t, m)
	wx := mustWatch(t, m, Key{GVR: cmGVR, Namespace: "x"}, "rule-x", &recorder{})
	wy := mustWatch(t, m, Key{GVR: cmGVR, Namespace: "y"}, "rule-y", &recorder{})

	waitPhase(t, wx, PhaseForbidden)
	err := wx.State().Err
	if want := `forbidden: cannot list configmaps in namespace "x": `; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("State().Err = %v, want prefix %q", err, want)
	}
	var fe *ForbiddenError
	if !errors.As(err, &fe) || fe.Verb != "list" || fe.Namespace != "x" || fe.Resource != cmGVR.GroupResource() || !apierrors.IsForbidden(err) {
		t.Fatalf("State().Err = %#v, want a *ForbiddenError for list configmaps in x that unwraps to a 403", err)
	}
	testcluster.Eventually(t, "the other watch to sync", wy.HasSynced)

	// Retries of the same failure are not logged again.
	testcluster.Eventually(t, "a few retries", func() bool { return deniedLists.Load() >= 4 })
	if n := logs.Count("level=WARN", "not permitted"); n != 1 {
		t.Errorf("forbidden warned %d times over %d attempts, want 1", n, deniedLists.Load())
	}

	denied.Store(false)
	testcluster.Eventually(t, "the forbidden watch to heal", wx.HasSynced)
	if s := wx.State(); s.Phase != PhaseSynced || s.Err != nil {
		t.Errorf("State() = %v, want synced", s)
	}
}

func TestForbiddenWatchIsReported(t *testing.T) {
	checkLeaks(t)
	log, _ := newTestLogger(t)
	fake := newFakeClient()
	fake.PrependWatchReactor("configmaps", func(clienttesting.Action) (bool, watch.Interface, error) {
		return true, nil, forbidden("watch", cmGVR.GroupResource(), "")
	})
	m := New(fake, newFakeSource(cmResource), Options{Logger: log})
	runManager(t, m)
	w := mustWatch(t, m, Key{GVR: cmGVR}, "rule", &recorder{})
	waitPhase(t, w, PhaseForbidden)
	if want := "forbidden: cannot watch configmaps in all namespaces: "; !strings.HasPrefix(w.State().Err.Error(), want) {
		t.Fatalf("State().Err = %v, want prefix %q", w.State().Err, want)
	}
}

func TestNamespaceOnClusterScopedResourceFails(t *testing.T) {
	checkLeaks(t)
	log, _ := newTestLogger(t)
	m := New(newFakeClient(), newFakeSource(thingResource), Options{Logger: log})
	runManager(t, m)
	w := mustWatch(t, m, Key{GVR: thingGVR, Namespace: "x"}, "rule", &recorder{})
	waitPhase(t, w, PhaseFailed)
	if err := w.State().Err; err == nil || !strings.Contains(err.Error(), "cluster-scoped") {
		t.Fatalf("State().Err = %v, want a cluster-scoped complaint", err)
	}
	ok := mustWatch(t, m, Key{GVR: thingGVR}, "rule", &recorder{})
	testcluster.Eventually(t, "the cluster-wide watch to sync", ok.HasSynced)
}

func TestInitialListsAreGated(t *testing.T) {
	checkLeaks(t)
	log, _ := newTestLogger(t)
	var objs []runtime.Object
	for i := range 6 {
		objs = append(objs, cmObj(fmt.Sprintf("n%d", i), "a"))
	}
	client := &hookedClient{Interface: newFakeClient(objs...), delay: 20 * time.Millisecond}
	m := New(client, newFakeSource(cmResource), Options{Logger: log, MaxConcurrentInitialLists: 2})
	var ws []*Watch
	for i := range 6 {
		ws = append(ws, mustWatch(t, m, Key{GVR: cmGVR, Namespace: fmt.Sprintf("n%d", i)}, "rule", &recorder{}))
	}
	runManager(t, m)
	for _, w := range ws {
		testcluster.Eventually(t, "every watch to sync", w.HasSynced)
	}
	if n := client.maxInflight.Load(); n > 2 || n < 1 {
		t.Fatalf("at most %d lists ran at once, want 1 or 2", n)
	}
}

func TestStopWaitsForHandler(t *testing.T) {
	checkLeaks(t)
	log, _ := newTestLogger(t)
	var objs []runtime.Object
	for i := range 20 {
		objs = append(objs, cmObj("ns", fmt.Sprintf("o%02d", i)))
	}
	m := New(newFakeClient(objs...), newFakeSource(cmResource), Options{Logger: log})
	runManager(t, m)
	var running, calls atomic.Int32
	started := make(chan struct{}, 1)
	h := &funcHandler{add: func() {
		running.Add(1)
		defer running.Add(-1)
		calls.Add(1)
		select {
		case started <- struct{}{}:
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}}
	w, err := m.Watch(Key{GVR: cmGVR}, "slow", h)
	if err != nil {
		t.Fatal(err)
	}
	<-started
	w.Stop()
	if n := running.Load(); n != 0 {
		t.Fatalf("handler still running after Stop returned")
	}
	after := calls.Load()
	// The informer is gone (last subscriber), so nothing can call h now.
	if st := m.Status(); len(st) != 0 {
		t.Fatalf("Status() = %+v after the last Stop", st)
	}
	if calls.Load() != after {
		t.Fatal("handler called after Stop returned")
	}
}

type funcHandler struct{ add func() }

func (f *funcHandler) OnAdd(any, bool)   { f.add() }
func (f *funcHandler) OnUpdate(any, any) {}
func (f *funcHandler) OnDelete(any)      {}

func TestRunLifecycle(t *testing.T) {
	checkLeaks(t)
	log, _ := newTestLogger(t)
	src := newFakeSource(cmResource)
	m := New(newFakeClient(cmObj("ns", "a")), src, Options{Logger: log})
	if _, err := m.Watch(Key{}, "bad", &recorder{}); err == nil {
		t.Error("Watch with an empty key succeeded")
	}
	if _, err := m.Watch(Key{GVR: cmGVR}, "nil", nil); err == nil {
		t.Error("Watch with a nil handler succeeded")
	}
	w := mustWatch(t, m, Key{GVR: cmGVR}, "rule", &recorder{})

	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() { errc <- m.Run(ctx) }()
	testcluster.Eventually(t, "sync", w.HasSynced)
	if err := m.Run(ctx); err == nil {
		t.Error("second Run succeeded")
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if s := w.State(); s.Phase != PhaseStopped {
		t.Errorf("after Run returned, State() = %v, want stopped", s)
	}
	if w.HasSynced() {
		t.Error("HasSynced() after Run returned")
	}
	if _, err := m.Watch(Key{GVR: cmGVR}, "late", &recorder{}); !errors.Is(err, ErrStopped) {
		t.Errorf("Watch after Run: err = %v, want ErrStopped", err)
	}
	if n := src.subscribers(); n != 0 {
		t.Errorf("%d discovery subscriptions left", n)
	}
	w.Stop()
}

// TestWatchWhileRunStarts: a Watch made while Run is starting gets exactly
// one informer (it once got two, both running the same entry).
func TestWatchWhileRunStarts(t *testing.T) {
	checkLeaks(t)
	log, logs := newTestLogger(t)
	client := &hookedClient{Interface: newFakeClient(cmObj("ns", "a"))}
	src := newFakeSource(cmResource)
	subscribing, watched := make(chan struct{}), make(chan struct{})
	src.onSubscribe = func() {
		close(subscribing)
		<-watched
	}
	m := New(client, src, Options{Logger: log})
	runManager(t, m)
	<-subscribing
	w := mustWatch(t, m, Key{GVR: cmGVR}, "rule", &recorder{})
	close(watched)
	testcluster.Eventually(t, "sync", w.HasSynced)
	if n := client.initialLists.Load(); n != 1 {
		t.Fatalf("%d informers started, want 1", n)
	}
	if n := logs.Count("informer synced"); n != 1 {
		t.Fatalf("'informer synced' logged %d times, want 1", n)
	}
}

// TestFirstWatchSetsTheInformersFields: the informer a key's first watch
// starts caches that watch's fields, not whole objects. The entry's loop
// once started before the watch was added, and could read an empty set
// of watches (whole objects) when it won the race; many keys give it
// many chances.
func TestFirstWatchSetsTheInformersFields(t *testing.T) {
	checkLeaks(t)
	m := New(newFakeClient(cmObj("ns", "a")), newFakeSource(cmResource), Options{Logger: discardLogger()})
	runManager(t, m)
	fields := projection.New(projection.Path{"data", "keep"})
	for i := range 200 {
		w, err := m.WatchFields(Key{GVR: cmGVR, LabelSelector: fmt.Sprintf("n!=%d", i)}, "rule", &recorder{}, fields)
		if err != nil {
			t.Fatal(err)
		}
		testcluster.Eventually(t, "the watch to sync", w.HasSynced)
		w.e.mu.Lock()
		got := w.e.inst.fields
		w.e.mu.Unlock()
		if !got.Equal(fields) {
			t.Fatalf("watch %d: the informer caches %s, want %s", i, got, fields)
		}
		w.Stop()
	}
}
