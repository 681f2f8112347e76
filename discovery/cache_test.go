package discovery_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/internal/leaktest"
)

// fakeClient answers ServerGroupsAndResources from fields tests change.
// Other DiscoveryInterface methods are not used by the Cache and panic.
type fakeClient struct {
	cgdiscovery.DiscoveryInterface

	mu     sync.Mutex
	groups []*metav1.APIGroup
	lists  []*metav1.APIResourceList
	err    error
	calls  int
}

func (f *fakeClient) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil && !cgdiscovery.IsGroupDiscoveryFailedError(f.err) {
		return nil, nil, f.err
	}
	return f.groups, f.lists, f.err
}

func (f *fakeClient) set(groups []*metav1.APIGroup, lists []*metav1.APIResourceList, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.groups, f.lists, f.err = groups, lists, err
}

func (f *fakeClient) callCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func group(name, preferred string, versions ...string) *metav1.APIGroup {
	g := &metav1.APIGroup{Name: name}
	for _, v := range versions {
		gv := metav1.GroupVersionForDiscovery{GroupVersion: schema.GroupVersion{Group: name, Version: v}.String(), Version: v}
		g.Versions = append(g.Versions, gv)
		if v == preferred {
			g.PreferredVersion = gv
		}
	}
	return g
}

func list(gv string, resources ...metav1.APIResource) *metav1.APIResourceList {
	return &metav1.APIResourceList{GroupVersion: gv, APIResources: resources}
}

var watchable = metav1.Verbs{"get", "list", "watch", "create", "delete"}

func res(name, kind string, namespaced bool, short ...string) metav1.APIResource {
	return metav1.APIResource{Name: name, SingularName: strings.ToLower(kind), Kind: kind, Namespaced: namespaced, Verbs: watchable, ShortNames: short}
}

// cluster1 is a small server: core, apps, a group whose preferred version
// is not listed first, and resources kreact must leave out.
func cluster1() ([]*metav1.APIGroup, []*metav1.APIResourceList) {
	return []*metav1.APIGroup{
			group("", "v1", "v1"),
			group("apps", "v1", "v1"),
			group("autoscaling", "v2", "v1", "v2"),
			group("metrics.k8s.io", "v1beta1", "v1beta1"),
		}, []*metav1.APIResourceList{
			// Aggregated discovery hands lists over in map order.
			list("autoscaling/v1", res("horizontalpodautoscalers", "HorizontalPodAutoscaler", true, "hpa")),
			list("v1",
				res("pods", "Pod", true, "po"),
				metav1.APIResource{Name: "pods/status", Kind: "Pod", Namespaced: true, Verbs: metav1.Verbs{"get", "patch"}},
				metav1.APIResource{Name: "bindings", Kind: "Binding", Namespaced: true, Verbs: metav1.Verbs{"create"}},
				metav1.APIResource{Name: "componentstatuses", Kind: "ComponentStatus", Verbs: metav1.Verbs{"get", "list"}},
				metav1.APIResource{Name: "nodes", Kind: "Node", Verbs: watchable},
			),
			list("metrics.k8s.io/v1beta1", res("pods", "PodMetrics", true)),
			list("apps/v1", res("deployments", "Deployment", true, "deploy")),
			list("autoscaling/v2", res("horizontalpodautoscalers", "HorizontalPodAutoscaler", true, "hpa")),
		}
}

func names(rs []apiresource.Resource) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.GVR.String()
		if r.Preferred {
			out[i] += "*"
		}
	}
	return out
}

func TestRefreshBuildsSnapshot(t *testing.T) {
	client := &fakeClient{}
	client.set(func() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
		g, l := cluster1()
		return g, l, nil
	}())
	c := discovery.New(client, discovery.Options{})
	if c.HasSynced() || len(c.Snapshot().Resources) != 0 {
		t.Fatal("new cache is not empty")
	}
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !c.HasSynced() {
		t.Error("HasSynced false after a refresh")
	}
	snap := c.Snapshot()
	want := []string{
		"/v1, Resource=pods*",
		"/v1, Resource=nodes*",
		"apps/v1, Resource=deployments*",
		"autoscaling/v2, Resource=horizontalpodautoscalers*",
		"autoscaling/v1, Resource=horizontalpodautoscalers",
		"metrics.k8s.io/v1beta1, Resource=pods*",
	}
	if got := names(snap.Resources); !slices.Equal(got, want) {
		t.Errorf("resources\n got %q\nwant %q", got, want)
	}
	nodes, ok := snap.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "nodes"})
	if !ok || nodes.Singular != "node" || nodes.Namespaced || nodes.Kind != "Node" {
		t.Errorf("nodes = %+v, %t; want singular guessed from the kind, cluster-scoped", nodes, ok)
	}
	pods, _ := snap.Lookup(schema.GroupVersionResource{Version: "v1", Resource: "pods"})
	if !slices.Equal(pods.Subresources, []string{"status"}) || len(nodes.Subresources) != 0 || !pods.HasSubresource("status") || nodes.HasSubresource("status") {
		t.Errorf("subresources: pods %q, nodes %q; want pods/status only", pods.Subresources, nodes.Subresources)
	}
	deploy, _ := snap.Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"})
	if !slices.Equal(deploy.ShortNames, []string{"deploy"}) || !deploy.Namespaced || deploy.GVK().Kind != "Deployment" {
		t.Errorf("deployments = %+v", deploy)
	}

	// Nothing changed: the same snapshot pointer.
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	if c.Snapshot() != snap {
		t.Error("an unchanged refresh replaced the snapshot")
	}
}

func TestRefreshErrorKeepsSnapshot(t *testing.T) {
	client := &fakeClient{}
	g, l := cluster1()
	client.set(g, l, nil)
	c := discovery.New(client, discovery.Options{})
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	boom := errors.New("connection refused")
	client.set(nil, nil, boom)
	if err := c.Refresh(t.Context()); !errors.Is(err, boom) {
		t.Fatalf("Refresh error = %v, want it to wrap %v", err, boom)
	}
	if c.Snapshot() != snap {
		t.Error("a failed refresh changed the snapshot")
	}
}

func TestGroupDiscoveryFailedKeepsLastGood(t *testing.T) {
	leaktest.Check(t)
	client := &fakeClient{}
	g, l := cluster1()
	client.set(g, l, nil)
	var logs bytes.Buffer
	c := discovery.New(client, discovery.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := names(c.Snapshot().Resources)
	diffs := make(chan discovery.Diff, 10)
	cancel := c.Subscribe(func(d discovery.Diff) { diffs <- d })
	defer cancel()

	// metrics.k8s.io is down; autoscaling/v2, the preferred version, is
	// stale in aggregated discovery (absent from the group's versions).
	metrics := schema.GroupVersion{Group: "metrics.k8s.io", Version: "v1beta1"}
	hpa2 := schema.GroupVersion{Group: "autoscaling", Version: "v2"}
	down := &cgdiscovery.ErrGroupDiscoveryFailed{Groups: map[schema.GroupVersion]error{
		metrics: errors.New("service unavailable"),
		hpa2:    cgdiscovery.StaleGroupVersionError{},
	}}
	client.set([]*metav1.APIGroup{
		group("", "v1", "v1"),
		group("apps", "v1", "v1"),
		group("autoscaling", "v1", "v1"),
		{Name: "metrics.k8s.io"},
	}, []*metav1.APIResourceList{l[1], l[3], l[0]}, down)
	for range 3 {
		if err := c.Refresh(t.Context()); err != nil {
			t.Fatalf("Refresh with an aggregated API down: %v", err)
		}
	}
	if got := names(c.Snapshot().Resources); !slices.Equal(got, before) {
		t.Errorf("with groups down\n got %q\nwant %q (unchanged)", got, before)
	}
	if n := strings.Count(logs.String(), "level=WARN"); n != 1 {
		t.Errorf("%d warnings for a group that stayed down, want 1:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), "metrics.k8s.io/v1beta1") {
		t.Errorf("warning does not name the group version:\n%s", logs.String())
	}

	// The API comes back without metrics: now that is a removal.
	client.set(g[:3], []*metav1.APIResourceList{l[0], l[1], l[3], l[4]}, nil)
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	d := <-diffs
	if len(d.Added) != 0 || len(d.Removed) != 1 || d.Removed[0].GVR != metrics.WithResource("pods") {
		t.Errorf("diff = %+v, want metrics pods removed", d)
	}
	select {
	case d := <-diffs:
		t.Errorf("unexpected diff while the group was down: %+v", d)
	default:
	}
}

func TestSubscribersGetDiffsInOrder(t *testing.T) {
	leaktest.Check(t)
	client := &fakeClient{}
	core := group("", "v1", "v1")
	pods := res("pods", "Pod", true)
	c := discovery.New(client, discovery.Options{})

	// A subscriber that is stuck must not delay Refresh or the others.
	release := make(chan struct{})
	var slow []discovery.Diff
	slowDone := make(chan struct{})
	cancelSlow := c.Subscribe(func(d discovery.Diff) {
		<-release
		slow = append(slow, d)
		if len(slow) == 10 {
			close(slowDone)
		}
	})
	fast := make(chan discovery.Diff, 20)
	cancelFast := c.Subscribe(func(d discovery.Diff) { fast <- d })

	// Step i serves crd-i only, so each refresh adds one and removes one.
	for i := range 10 {
		cr := res(fmt.Sprintf("things%d", i), "Thing", true)
		client.set([]*metav1.APIGroup{core}, []*metav1.APIResourceList{list("v1", pods, cr)}, nil)
		if err := c.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	check := func(who string, diffs []discovery.Diff) {
		t.Helper()
		for i, d := range diffs {
			if len(d.Added) == 0 || d.Added[len(d.Added)-1].GVR.Resource != fmt.Sprintf("things%d", i) {
				t.Errorf("%s: diff %d added %q, want things%d last", who, i, names(d.Added), i)
			}
			if i > 0 && (len(d.Removed) != 1 || d.Removed[0].GVR.Resource != fmt.Sprintf("things%d", i-1)) {
				t.Errorf("%s: diff %d removed %q, want things%d", who, i, names(d.Removed), i-1)
			}
		}
	}
	var got []discovery.Diff
	for range 10 {
		got = append(got, <-fast)
	}
	check("fast subscriber", got)
	close(release)
	<-slowDone
	check("slow subscriber", slow)

	cancelFast()
	cancelFast() // idempotent
	cancelSlow()
	client.set([]*metav1.APIGroup{core}, []*metav1.APIResourceList{list("v1", pods)}, nil)
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-fast:
		t.Errorf("diff after cancel: %+v", d)
	default:
	}
}

func TestCancelFromInsideSubscriber(t *testing.T) {
	leaktest.Check(t)
	client := &fakeClient{}
	c := discovery.New(client, discovery.Options{})
	calls := make(chan struct{}, 10)
	var cancel func()
	ready := make(chan struct{})
	cancel = c.Subscribe(func(discovery.Diff) {
		<-ready
		cancel()
		calls <- struct{}{}
	})
	close(ready)
	for i := range 3 {
		client.set([]*metav1.APIGroup{group("", "v1", "v1")}, []*metav1.APIResourceList{list("v1", res(fmt.Sprintf("r%d", i), "R", true))}, nil)
		if err := c.Refresh(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	<-calls
	// Later diffs were dropped by the cancel; goleak checks the goroutine
	// ended.
}

func TestRunRefreshesAndStops(t *testing.T) {
	leaktest.Check(t)
	client := &fakeClient{}
	g, l := cluster1()
	client.set(g, l, nil)
	c := discovery.New(client, discovery.Options{MinRefreshInterval: time.Millisecond})

	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	waitFor(t, "first refresh", c.HasSynced)
	if err := c.Run(ctx); err == nil {
		t.Error("a second Run while running returned nil")
	}
	c.RequestRefresh()
	waitFor(t, "requested refresh", func() bool { return client.callCount() >= 2 })

	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v, want nil after cancel", err)
	}
}

func TestRequestRefreshIsRateLimited(t *testing.T) {
	leaktest.Check(t)
	client := &fakeClient{}
	g, l := cluster1()
	client.set(g, l, nil)
	c := discovery.New(client, discovery.Options{MinRefreshInterval: time.Hour})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	waitFor(t, "first refresh", c.HasSynced)

	for range 100 {
		c.RequestRefresh()
	}
	time.Sleep(100 * time.Millisecond) // room for a wrong refresh to happen
	if n := client.callCount(); n != 1 {
		t.Errorf("%d discovery calls, want 1: requests within MinRefreshInterval of a refresh must wait", n)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

func TestRunRetriesUntilTheServerAnswers(t *testing.T) {
	leaktest.Check(t)
	client := &fakeClient{}
	client.set(nil, nil, errors.New("connection refused"))
	c := discovery.New(client, discovery.Options{Debounce: 5 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	waitFor(t, "a few failed attempts", func() bool { return client.callCount() >= 3 })
	g, l := cluster1()
	client.set(g, l, nil)
	waitFor(t, "refresh after the server came back", c.HasSynced)
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run = %v", err)
	}
}

// waitFor polls cond with a generous deadline; it asserts an outcome, not
// a duration.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
