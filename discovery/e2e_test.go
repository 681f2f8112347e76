//go:build e2e

package discovery_test

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/restmapper"
)

// The end-to-end tests share one real control plane (etcd and
// kube-apiserver) per test binary.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// verifyNoLeaks checks, after the test and its cleanups, that every
// goroutine started since this call has ended.
func verifyNoLeaks(t *testing.T) { leaktest.Check(t) }

type clients struct {
	discovery cgdiscovery.DiscoveryInterface
	metadata  metadata.Interface
	dynamic   dynamic.Interface
}

func newClients(t *testing.T) clients {
	t.Helper()
	cfg := cluster.Config()
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return clients{discovery: dc, metadata: mc, dynamic: dyn}
}

func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// runCache runs c until the test ends and checks that Run returns nil.
func runCache(t *testing.T, c *discovery.Cache) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	waitFor(t, "first discovery", c.HasSynced)
}

// diffLog collects what a subscriber receives.
type diffLog struct {
	mu    sync.Mutex
	diffs []discovery.Diff
}

func (l *diffLog) add(d discovery.Diff) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.diffs = append(l.diffs, d)
}

func (l *diffLog) removed() []apiresource.Resource {
	l.mu.Lock()
	defer l.mu.Unlock()
	var rs []apiresource.Resource
	for _, d := range l.diffs {
		rs = append(rs, d.Removed...)
	}
	return rs
}

func (l *diffLog) saw(gvr schema.GroupVersionResource, added bool) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, d := range l.diffs {
		rs := d.Removed
		if added {
			rs = d.Added
		}
		if slices.ContainsFunc(rs, func(r apiresource.Resource) bool { return r.GVR == gvr }) {
			return true
		}
	}
	return false
}

func TestE2ERefreshAgainstAPIServer(t *testing.T) {
	cl := newClients(t)
	c := discovery.New(cl.discovery, discovery.Options{Logger: testLogger(t)})
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	snap := c.Snapshot()
	for _, r := range snap.Resources {
		if strings.Contains(r.GVR.Resource, "/") {
			t.Errorf("subresource %s kept", r.GVR)
		}
		if !slices.Contains(r.Verbs, "list") || !slices.Contains(r.Verbs, "watch") {
			t.Errorf("%s kept without list and watch: %v", r.GVR, r.Verbs)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "pods"},
		{Group: "apps", Version: "v1", Resource: "deployments"},
		{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"},
	} {
		if r, ok := snap.Lookup(gvr); !ok || !r.Preferred || r.Kind == "" || r.Singular == "" {
			t.Errorf("Lookup(%s) = %+v, %t", gvr, r, ok)
		}
	}
	for _, gvr := range []schema.GroupVersionResource{
		{Version: "v1", Resource: "bindings"},                                     // create only
		{Group: "authentication.k8s.io", Version: "v1", Resource: "tokenreviews"}, // create only
	} {
		if _, ok := snap.Lookup(gvr); ok {
			t.Errorf("%s kept", gvr)
		}
	}
	if snap.Resources[0].GVR.Group != "" {
		t.Errorf("first resource %s, want the core group first", snap.Resources[0].GVR)
	}
}

// TestE2ENewCRDAppearsAndDisappears creates a CRD while the cache runs
// with its default 5-minute poll: the CRD's resource must reach a
// subscriber, and the mapper, well before the poll would, through the
// CRD watch; and deleting it must report it removed.
func TestE2ENewCRDAppearsAndDisappears(t *testing.T) {
	verifyNoLeaks(t)
	cl := newClients(t)
	c := discovery.New(cl.discovery, discovery.Options{Metadata: cl.metadata, Logger: testLogger(t)})
	runCache(t, c)
	var log diffLog
	cancel := c.Subscribe(log.add)
	defer cancel()
	m := restmapper.New(c, restmapper.Options{})

	crd := testcluster.CRD{Group: "e2e.kreact.io", Kind: "Gadget", Plural: "gadgets", ShortNames: []string{"gdg"}}
	var nf *restmapper.NotFoundError
	if _, err := m.Resolve("gdg"); !errors.As(err, &nf) {
		t.Fatalf("Resolve(gdg) before the CRD = %v, want *NotFoundError", err)
	}

	// Created as unstructured through the dynamic client, not waiting for
	// Established: the cache must catch up by itself.
	if _, err := cl.dynamic.Resource(testcluster.CRDGVR).Create(t.Context(), crd.Object(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), cl.dynamic, crd) })
	waitFor(t, "the new CRD in a diff", func() bool { return log.saw(crd.GVR(), true) })

	r, err := m.Resolve("gdg")
	if err != nil {
		t.Fatalf("Resolve(gdg) with the CRD established: %v", err)
	}
	if r.GVR != crd.GVR() || r.Kind != "Gadget" || !r.Namespaced || !r.Preferred {
		t.Errorf("Resolve(gdg) = %+v", r)
	}
	for _, ref := range []string{"gadgets", "gadget", "Gadget", "gadgets.e2e.kreact.io", "e2e.kreact.io/v1 Gadget"} {
		if got, err := m.Resolve(ref); err != nil || got.GVR != crd.GVR() {
			t.Errorf("Resolve(%q) = %s, %v", ref, got.GVR, err)
		}
	}

	// The wait for the diff starts once the API server has deleted the
	// CRD (its cleanup finalizer can take a while on a loaded machine),
	// so that a failure says which of the two was late.
	if err := testcluster.DeleteCRD(t.Context(), cl.dynamic, crd); err != nil {
		t.Fatalf("the API server did not finish deleting the CRD: %v", err)
	}
	waitFor(t, "the deleted CRD in a diff", func() bool { return log.saw(crd.GVR(), false) })
	if _, err := m.Resolve("gdg"); !errors.As(err, &nf) {
		t.Errorf("Resolve(gdg) after deletion = %v, want *NotFoundError", err)
	}
}

// TestE2EAggregatedAPIDown registers an APIService whose server does not
// exist. Discovery of that group fails; the rest must be served as
// before, without an error.
func TestE2EAggregatedAPIDown(t *testing.T) {
	cl := newClients(t)
	c := discovery.New(cl.discovery, discovery.Options{Logger: testLogger(t)})
	if err := c.Refresh(t.Context()); err != nil {
		t.Fatal(err)
	}
	before := len(c.Snapshot().Resources)

	apiServices := cl.dynamic.Resource(schema.GroupVersionResource{Group: "apiregistration.k8s.io", Version: "v1", Resource: "apiservices"})
	svc := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiregistration.k8s.io/v1",
		"kind":       "APIService",
		"metadata":   map[string]any{"name": "v1.broken.kreact.io"},
		"spec": map[string]any{
			"group":                 "broken.kreact.io",
			"version":               "v1",
			"groupPriorityMinimum":  int64(1000),
			"versionPriority":       int64(15),
			"insecureSkipTLSVerify": true,
			"service":               map[string]any{"namespace": "default", "name": "nothing-here", "port": int64(443)},
		},
	}}
	if _, err := apiServices.Create(t.Context(), svc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = apiServices.Delete(context.Background(), "v1.broken.kreact.io", metav1.DeleteOptions{}) })

	for range 3 {
		if err := c.Refresh(t.Context()); err != nil {
			t.Fatalf("Refresh with an aggregated API down: %v", err)
		}
	}
	if after := len(c.Snapshot().Resources); after != before {
		t.Errorf("%d resources with an aggregated API down, %d before", after, before)
	}
	if _, ok := c.Snapshot().Lookup(schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}); !ok {
		t.Error("deployments gone with an aggregated API down")
	}
}

// laggingDiscovery hides one group from discovery answers while told to,
// as the API server does for a moment after a CRD is Established.
type laggingDiscovery struct {
	cgdiscovery.DiscoveryInterface
	mu     sync.Mutex
	hidden string
	calls  int
}

func (l *laggingDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	groups, lists, err := l.DiscoveryInterface.ServerGroupsAndResources()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls++
	if l.hidden == "" {
		return groups, lists, err
	}
	groups = slices.DeleteFunc(slices.Clone(groups), func(g *metav1.APIGroup) bool { return g.Name == l.hidden })
	lists = slices.DeleteFunc(slices.Clone(lists), func(r *metav1.APIResourceList) bool {
		return strings.HasPrefix(r.GroupVersion, l.hidden+"/")
	})
	return groups, lists, err
}

func (l *laggingDiscovery) set(hidden string) (calls int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.hidden = hidden
	return l.calls
}

// TestE2EDiscoveryLagIsChased hides an Established CRD from discovery
// until every refresh its events triggered has run, then shows it: the
// cache must notice that discovery disagrees with the CRD informer and
// refresh again by itself, well before its 5-minute poll.
func TestE2EDiscoveryLagIsChased(t *testing.T) {
	verifyNoLeaks(t)
	cl := newClients(t)
	lagging := &laggingDiscovery{DiscoveryInterface: cl.discovery}
	c := discovery.New(lagging, discovery.Options{Metadata: cl.metadata, Logger: testLogger(t)})
	runCache(t, c)
	var log diffLog
	cancel := c.Subscribe(log.add)
	defer cancel()

	crd := testcluster.CRD{Group: "lag.kreact.io", Kind: "Laggard", Plural: "laggards", ClusterScoped: true}
	start := lagging.set(crd.Group)
	if err := testcluster.CreateCRD(t.Context(), cl.dynamic, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), cl.dynamic, crd) })
	// The debounced refresh and the follow-up after it.
	waitFor(t, "refreshes triggered by the CRD", func() bool { return lagging.set(crd.Group) >= start+2 })
	if log.saw(crd.GVR(), true) {
		t.Fatal("hidden CRD reported")
	}
	lagging.set("")
	waitFor(t, "the CRD once discovery serves it", func() bool { return log.saw(crd.GVR(), true) })
	if r, ok := c.Snapshot().Lookup(crd.GVR()); !ok || r.Namespaced {
		t.Errorf("Lookup = %+v, %t; want the cluster-scoped Laggard", r, ok)
	}
}

// TestE2EAPIServerRestart stops the API server under a running cache: the
// snapshot stays, and once the server is back a new CRD is seen, through
// informers that reconnected.
func TestE2EAPIServerRestart(t *testing.T) {
	verifyNoLeaks(t)
	cl := newClients(t)
	c := discovery.New(cl.discovery, discovery.Options{Metadata: cl.metadata, Logger: testLogger(t), MinRefreshInterval: 100 * time.Millisecond})
	runCache(t, c)
	var log diffLog
	cancel := c.Subscribe(log.add)
	defer cancel()
	snap := c.Snapshot()

	if err := cluster.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted := false
	t.Cleanup(func() {
		if !restarted {
			if err := cluster.StartAPIServer(); err != nil {
				t.Errorf("restart API server: %v", err)
			}
		}
	})
	if err := c.Refresh(t.Context()); err == nil {
		t.Error("Refresh succeeded with the API server down")
	}
	c.RequestRefresh()
	if c.Snapshot() != snap {
		t.Error("snapshot changed while the API server was down")
	}
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	restarted = true

	crd := testcluster.CRD{Group: "restart.kreact.io", Kind: "Phoenix", Plural: "phoenixes"}
	if err := testcluster.CreateCRD(t.Context(), cl.dynamic, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), cl.dynamic, crd) })
	waitFor(t, "a CRD created after the restart", func() bool { return log.saw(crd.GVR(), true) })
	if removed := log.removed(); len(removed) > 0 {
		t.Errorf("resources reported removed across the restart: %q", names(removed))
	}
}
