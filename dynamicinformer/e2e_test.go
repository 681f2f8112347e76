//go:build e2e

package dynamicinformer

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/internal/testcluster"
)

// The e2e tests run against a real etcd and kube-apiserver, one per test
// binary, started by TestMain. They share it, so each uses its own
// namespaces and CRD groups.

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

var (
	namespaceGVR   = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	roleGVR        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindingGVR = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	secretGVR      = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// e2e is a Manager on the real discovery cache, plus an admin client.
type e2e struct {
	m     *Manager
	admin dynamic.Interface
	logs  *testcluster.LogBuffer
}

// startE2E runs a discovery cache and a Manager whose informers use cfg
// (the admin config when nil) until the test ends. They list and watch
// as kreact's do (Options.REST, made by RESTClient), unless wrap is
// given: then through the dynamic client, wrapped by wrap.
func startE2E(t *testing.T, cfg *rest.Config, opts Options, wrap ...func(dynamic.Interface) dynamic.Interface) *e2e {
	t.Helper()
	if cfg == nil {
		cfg = cluster.Config()
	}
	log, logs := newTestLogger(t)
	discLog, discLogs := newTestLogger(t)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("discovery log:\n%s", discLogs.String())
		}
	})
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	disc := discovery.New(cgdiscovery.NewDiscoveryClientForConfigOrDie(cluster.Config()), discovery.Options{
		Metadata: metadata.NewForConfigOrDie(cluster.Config()),
		Logger:   discLog,
	})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := disc.Run(ctx); err != nil {
			t.Errorf("discovery Run: %v", err)
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	testcluster.Eventually(t, "discovery to sync", disc.HasSynced)

	opts.Logger = log
	var client dynamic.Interface = dynamic.NewForConfigOrDie(cfg)
	for _, w := range wrap {
		client = w(client)
	}
	if len(wrap) == 0 && opts.REST == nil {
		rc, err := RESTClient(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		opts.REST = rc
	}
	m := New(client, disc, opts)
	runManager(t, m)
	return &e2e{m: m, admin: admin, logs: logs}
}

// createNamespace creates a namespace named base plus a random suffix, so
// that tests can run again (-count) on the same cluster, and returns its
// name. Namespaces are not deleted: without a controller manager they
// would stay Terminating anyway.
func createNamespace(t *testing.T, client dynamic.Interface, base string) string {
	t.Helper()
	name := base + "-" + utilrand.String(5)
	ns := newObj("v1", "Namespace", "", name, nil)
	if _, err := client.Resource(namespaceGVR).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create namespace %s: %v", name, err)
	}
	return name
}

func createCM(ctx context.Context, client dynamic.Interface, ns, name string, lbls map[string]string) (*unstructured.Unstructured, error) {
	cm := newObj("v1", "ConfigMap", ns, name, lbls)
	_ = unstructured.SetNestedStringMap(cm.Object, map[string]string{"k": "v"}, "data")
	return client.Resource(cmGVR).Namespace(ns).Create(ctx, cm, metav1.CreateOptions{})
}

func mustCreateCM(t *testing.T, client dynamic.Interface, ns, name string, lbls map[string]string) *unstructured.Unstructured {
	t.Helper()
	obj, err := createCM(t.Context(), client, ns, name, lbls)
	if err != nil {
		t.Fatalf("create configmap %s/%s: %v", ns, name, err)
	}
	return obj
}

func mustUpdateCM(t *testing.T, client dynamic.Interface, ns, name, value string) *unstructured.Unstructured {
	t.Helper()
	ri := client.Resource(cmGVR).Namespace(ns)
	obj, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(obj.Object, value, "data", "k")
	obj, err = ri.Update(t.Context(), obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatalf("update configmap %s/%s: %v", ns, name, err)
	}
	return obj
}

// TestE2ECRDLifecycle: a watch on a CRD's resource made before the CRD
// exists waits, starts once the CRD is Established, stops quietly when the
// CRD is deleted, and resumes through the same handle when it is recreated.
func TestE2ECRDLifecycle(t *testing.T) {
	checkLeaks(t)
	s := startE2E(t, nil, Options{})
	crd := testcluster.CRD{Group: "lifecycle.kreact.dev", Kind: "Gadget", Plural: "gadgets"}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), s.admin, crd) })
	gadget := func(name string) *unstructured.Unstructured {
		return newObj("lifecycle.kreact.dev/v1", "Gadget", "default", name, nil)
	}

	rec := &recorder{}
	w := mustWatch(t, s.m, Key{GVR: crd.GVR()}, "gadget-rule", rec)
	testcluster.Eventually(t, "the pending watch to be logged", func() bool { return s.logs.Count("waiting for resource to appear") == 1 })
	if st := w.State(); st.Phase != PhasePending {
		t.Fatalf("before the CRD exists, State() = %v, want pending", st)
	}

	if err := testcluster.CreateCRD(t.Context(), s.admin, crd); err != nil {
		t.Fatal(err)
	}
	gadgets := s.admin.Resource(crd.GVR()).Namespace("default")
	if _, err := gadgets.Create(t.Context(), gadget("g1"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the add of g1", func() bool { return rec.count("add", "g1") == 1 })
	testcluster.Eventually(t, "sync", w.HasSynced)

	if err := testcluster.DeleteCRD(t.Context(), s.admin, crd); err != nil {
		t.Fatal(err)
	}
	waitPhase(t, w, PhasePending)
	// The CRD's objects are deleted before the CRD is, but the delete of g1
	// reaches the handler only if the informer's watch was up at that
	// moment (the API server closes watches when the CRD turns
	// Terminating), so it is not asserted.
	if n := rec.count("delete", "g1"); n > 1 {
		t.Errorf("g1 deleted %d times", n)
	}
	// Give a leftover informer time to retry its list a few times (its
	// back-off starts under a second), then count what was logged.
	time.Sleep(5 * time.Second)
	if n := s.logs.Count("no longer served"); n != 1 {
		t.Errorf("removal logged %d times, want once", n)
	}
	if n := s.logs.Count("level=WARN") + s.logs.Count("level=ERROR"); n != 0 {
		t.Errorf("%d warnings or errors logged after the CRD was deleted, want 0", n)
	}
	// kreact's own lines: client-go's reflector may also say, at info,
	// that its watch ended when the CRD went (as it happens, racing the
	// informer's stop), which is not kreact's to repeat or suppress.
	if n := s.logs.Count("level=INFO", "gadgets") - s.logs.Count("level=INFO", "gadgets", "source=client-go"); n != 2 {
		t.Errorf("%d info lines of kreact's about gadgets, want 2 (waiting, removed)", n)
	}

	if err := testcluster.CreateCRD(t.Context(), s.admin, crd); err != nil {
		t.Fatal(err)
	}
	// Creating a custom resource right after Established can meet a 404
	// until the API server's handler has caught up: retry.
	testcluster.Eventually(t, "create g2", func() bool {
		_, err := gadgets.Create(t.Context(), gadget("g2"), metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err)
	})
	testcluster.Eventually(t, "the add of g2 through the same handle", func() bool { return rec.count("add", "g2") == 1 })
	testcluster.Eventually(t, "sync after the CRD came back", w.HasSynced)
	if rec.count("add", "g1") != 1 {
		t.Errorf("g1 added %d times, want 1", rec.count("add", "g1"))
	}
	if rec.overlap.Load() {
		t.Error("handler calls overlapped")
	}
	w.Stop()
}

// TestE2ESelectorsAndNamespace: objects outside a watch's namespace, label
// selector or field selector never reach its handler.
func TestE2ESelectorsAndNamespace(t *testing.T) {
	checkLeaks(t)
	s := startE2E(t, nil, Options{})
	nsA, nsB := createNamespace(t, s.admin, "sel-a"), createNamespace(t, s.admin, "sel-b")
	// Unique, since the field-selector watch spans all namespaces.
	target := "fsel-target-" + utilrand.String(5)
	web := map[string]string{"app": "web"}
	db := map[string]string{"app": "db"}
	mustCreateCM(t, s.admin, nsA, "web-1", web)
	mustCreateCM(t, s.admin, nsA, "db-1", db)
	mustCreateCM(t, s.admin, nsB, "web-2", web)
	mustCreateCM(t, s.admin, nsA, target, nil)
	mustCreateCM(t, s.admin, nsB, target, nil)

	type watchCase struct {
		key     Key
		allowed func(ns, name string) bool
		rec     *recorder
		w       *Watch
	}
	cases := map[string]*watchCase{
		"labels": {
			key:     Key{GVR: cmGVR, Namespace: nsA, LabelSelector: "app=web"},
			allowed: func(ns, name string) bool { return ns == nsA && strings.HasPrefix(name, "web-") },
		},
		"fields": {
			key:     Key{GVR: cmGVR, FieldSelector: "metadata.name=" + target},
			allowed: func(_, name string) bool { return name == target },
		},
		"namespace": {
			key:     Key{GVR: cmGVR, Namespace: nsB},
			allowed: func(ns, _ string) bool { return ns == nsB },
		},
	}
	for name, c := range cases {
		c.rec = &recorder{}
		c.w = mustWatch(t, s.m, c.key, name, c.rec)
	}
	for _, c := range cases {
		testcluster.Eventually(t, "sync", c.w.HasSynced)
	}
	// A field the server cannot select on fails the watch, not the others.
	bad := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: nsA, FieldSelector: "data.k=v"}, "bad-field", &recorder{})
	waitPhase(t, bad, PhaseFailed)
	if err := bad.State().Err; !apierrors.IsBadRequest(err) || !strings.Contains(err.Error(), "data.k") {
		t.Errorf("State().Err = %v, want a 400 naming the field", err)
	}
	bad.Stop()

	// Changes outside every watch, then one inside each as a barrier: a
	// watch delivers events in resource-version order, so once the barrier
	// arrives anything earlier that was going to arrive has.
	mustUpdateCM(t, s.admin, nsA, "db-1", "changed")
	mustCreateCM(t, s.admin, nsA, "db-3", db)
	mustCreateCM(t, s.admin, nsA, "fsel-other", nil)
	mustUpdateCM(t, s.admin, nsB, target, "changed") // inside fields and namespace
	mustCreateCM(t, s.admin, nsA, "web-3", web)      // inside labels
	testcluster.Eventually(t, "the barrier events", func() bool {
		return cases["labels"].rec.count("add", "web-3") == 1 &&
			cases["fields"].rec.count("update", target) == 1 &&
			cases["namespace"].rec.count("update", target) == 1
	})

	want := map[string]map[string]int{
		"labels":    {nsA + "/web-1": 1, nsA + "/web-3": 1},
		"fields":    {nsA + "/" + target: 1, nsB + "/" + target: 2},
		"namespace": {nsB + "/web-2": 1, nsB + "/" + target: 2},
	}
	for name, c := range cases {
		for _, e := range c.rec.snapshot() {
			if !c.allowed(e.Namespace, e.Name) {
				t.Errorf("%s watch got %+v, which is outside %s", name, e, c.key)
			}
		}
		if got := c.rec.names(); fmt.Sprint(got) != fmt.Sprint(want[name]) {
			t.Errorf("%s watch events per object = %v, want %v", name, got, want[name])
		}
		if st := s.m.Status(); len(st) != 3 {
			t.Errorf("Status() has %d informers, want 3", len(st))
		}
	}
}

// TestE2EManyObjectsInitialList: 5,000 ConfigMaps that exist before the
// watch arrive as initial adds, each exactly once.
func TestE2EManyObjectsInitialList(t *testing.T) {
	checkLeaks(t)
	const n = 5000
	s := startE2E(t, nil, Options{})
	ns := createNamespace(t, s.admin, "bulk")

	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = 2000, 4000
	setup := dynamic.NewForConfigOrDie(cfg)
	g, ctx := errgroup.WithContext(t.Context())
	g.SetLimit(32)
	for i := range n {
		g.Go(func() error {
			_, err := createCM(ctx, setup, ns, fmt.Sprintf("cm-%04d", i), nil)
			if apierrors.IsAlreadyExists(err) {
				err = nil
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatalf("create configmaps: %v", err)
	}

	rec := &recorder{}
	w := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: ns}, "bulk-rule", rec)
	testcluster.Eventually(t, "sync", w.HasSynced)
	events := rec.snapshot()
	perName := map[string]int{}
	for _, e := range events {
		if e.Type != "add" || !e.Initial || e.Namespace != ns {
			t.Fatalf("unexpected event %+v", e)
		}
		perName[e.Name]++
	}
	for i := range n {
		name := fmt.Sprintf("cm-%04d", i)
		if perName[name] != 1 {
			t.Errorf("%s delivered %d times, want 1", name, perName[name])
		}
	}
	if len(events) != n || len(perName) != n {
		t.Errorf("%d events for %d objects, want %d each", len(events), len(perName), n)
	}
	testcluster.Eventually(t, "Status to count every object", func() bool {
		st := s.m.Status()
		return len(st) == 1 && st[0].Objects == n && st[0].Synced
	})
	// The objects in the cache were stripped.
	obj, ok, err := w.Get(ns, "cm-0000")
	if err != nil || !ok {
		t.Fatalf("Get: %v, %v", ok, err)
	}
	if obj.GetManagedFields() != nil {
		t.Error("cached object still has managedFields")
	}
}

// TestE2ESharedInformer: two subscribers on one key share one informer; a
// late one is replayed the cache; stopping one leaves the other flowing.
func TestE2ESharedInformer(t *testing.T) {
	checkLeaks(t)
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	ns := createNamespace(t, admin, "shared")
	for i := range 3 {
		mustCreateCM(t, admin, ns, fmt.Sprintf("pre-%d", i), nil)
	}

	// The manager's client counts the informers' lists.
	var hooked *hookedClient
	s := startE2E(t, nil, Options{}, func(c dynamic.Interface) dynamic.Interface {
		hooked = &hookedClient{Interface: c}
		return hooked
	})

	key := Key{GVR: cmGVR, Namespace: ns}
	rec1, rec2 := &recorder{}, &recorder{}
	w1 := mustWatch(t, s.m, key, "first", rec1)
	testcluster.Eventually(t, "w1 sync", w1.HasSynced)
	w2 := mustWatch(t, s.m, key, "second", rec2)
	testcluster.Eventually(t, "w2 sync", w2.HasSynced)

	for name, rec := range map[string]*recorder{"first": rec1, "second": rec2} {
		got := rec.snapshot()
		if len(got) != 3 {
			t.Fatalf("%s got %+v, want 3 initial adds", name, got)
		}
		for _, e := range got {
			if e.Type != "add" || !e.Initial {
				t.Errorf("%s got %+v, want an initial add", name, e)
			}
		}
	}
	if n := hooked.initialLists.Load(); n != 1 {
		t.Errorf("informer lists = %d, want 1 (shared)", n)
	}
	if st := s.m.Status(); len(st) != 1 || len(st[0].Owners) != 2 {
		t.Errorf("Status() = %+v, want one informer with two owners", st)
	}

	mustCreateCM(t, admin, ns, "both", nil)
	testcluster.Eventually(t, "both see the add", func() bool { return rec1.count("add", "both") == 1 && rec2.count("add", "both") == 1 })

	w1.Stop()
	before := rec1.count("", "")
	mustCreateCM(t, admin, ns, "after-stop", nil)
	testcluster.Eventually(t, "the remaining subscriber sees the add", func() bool { return rec2.count("add", "after-stop") == 1 })
	if rec1.count("", "") != before {
		t.Errorf("stopped subscriber got events: %+v", rec1.snapshot()[before:])
	}
	if !w2.HasSynced() || w2.State().Phase != PhaseSynced {
		t.Errorf("w2 State() = %v after w1 stopped", w2.State())
	}
}

// TestE2EForbidden: a user without RBAC sees the verb and resource in the
// watch's error, other watches of the same manager work, and granting the
// permission heals the watch.
func TestE2EForbidden(t *testing.T) {
	checkLeaks(t)
	const user = "kreact-e2e-nobody"
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	nsOK, nsDenied, nsListOnly := createNamespace(t, admin, "rbac-ok"), createNamespace(t, admin, "rbac-denied"), createNamespace(t, admin, "rbac-listonly")
	grant := func(ns string, verbs ...string) {
		t.Helper()
		vs := make([]any, len(verbs))
		for i, v := range verbs {
			vs[i] = v
		}
		role := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
			"metadata": map[string]any{"name": "cm-reader", "namespace": ns},
			"rules":    []any{map[string]any{"apiGroups": []any{""}, "resources": []any{"configmaps"}, "verbs": vs}},
		}}
		binding := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
			"metadata": map[string]any{"name": "cm-reader", "namespace": ns},
			"subjects": []any{map[string]any{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": user}},
			"roleRef":  map[string]any{"kind": "Role", "apiGroup": "rbac.authorization.k8s.io", "name": "cm-reader"},
		}}
		for gvr, obj := range map[schema.GroupVersionResource]*unstructured.Unstructured{roleGVR: role, roleBindingGVR: binding} {
			if _, err := admin.Resource(gvr).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				t.Fatalf("create %s in %s: %v", gvr.Resource, ns, err)
			}
		}
	}
	grant(nsOK, "list", "watch")
	grant(nsListOnly, "list")
	mustCreateCM(t, admin, nsOK, "visible", nil)

	cfg := cluster.Config()
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user}
	s := startE2E(t, cfg, Options{RetryPeriod: time.Second})

	okRec := &recorder{}
	ok := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: nsOK}, "ok", okRec)
	denied := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: nsDenied}, "denied", &recorder{})
	listOnly := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: nsListOnly}, "list-only", &recorder{})
	secrets := mustWatch(t, s.m, Key{GVR: secretGVR}, "secrets", &recorder{})

	for w, want := range map[*Watch]string{
		denied:   fmt.Sprintf("forbidden: cannot list configmaps in namespace %q: ", nsDenied),
		listOnly: fmt.Sprintf("forbidden: cannot watch configmaps in namespace %q: ", nsListOnly),
		secrets:  `forbidden: cannot list secrets in all namespaces: `,
	} {
		waitPhase(t, w, PhaseForbidden)
		err := w.State().Err
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), user) {
			t.Errorf("%s: State().Err = %v, want prefix %q and the user", w.Owner(), err, want)
		}
		var fe *ForbiddenError
		if !errors.As(err, &fe) || !apierrors.IsForbidden(err) {
			t.Errorf("%s: State().Err = %#v, want a *ForbiddenError wrapping a 403", w.Owner(), err)
		}
	}
	testcluster.Eventually(t, "the permitted watch to sync", ok.HasSynced)
	if okRec.count("add", "visible") != 1 {
		t.Errorf("permitted watch events = %+v", okRec.snapshot())
	}

	grant(nsDenied, "list", "watch")
	testcluster.Eventually(t, "the denied watch to heal once granted", denied.HasSynced)
	if st := listOnly.State(); st.Phase != PhaseForbidden {
		t.Errorf("list-only watch State() = %v, want still forbidden", st)
	}
}

// TestE2EAPIServerRestart: a change made after the API server restarts
// reaches the handler.
func TestE2EAPIServerRestart(t *testing.T) {
	checkLeaks(t)
	s := startE2E(t, nil, Options{})
	ns := createNamespace(t, s.admin, "restart")
	mustCreateCM(t, s.admin, ns, "before", nil)

	rec := &recorder{}
	w := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: ns}, "restart-rule", rec)
	testcluster.Eventually(t, "sync", w.HasSynced)

	if err := cluster.StopAPIServer(); err != nil {
		t.Fatalf("stop API server: %v", err)
	}
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatalf("start API server: %v", err)
	}
	updated := mustUpdateCM(t, s.admin, ns, "before", "after-restart")
	mustCreateCM(t, s.admin, ns, "after", nil)
	testcluster.Eventually(t, "the changes made after the restart", func() bool {
		for _, e := range rec.snapshot() {
			if e.Type == "update" && e.Name == "before" && e.RV == updated.GetResourceVersion() {
				return rec.count("add", "after") == 1
			}
		}
		return false
	})
	obj, found, err := w.Get(ns, "before")
	if err != nil || !found {
		t.Fatalf("Get: %v, %v", found, err)
	}
	if v, _, _ := unstructured.NestedString(obj.Object, "data", "k"); v != "after-restart" {
		t.Errorf("cached data.k = %q, want after-restart", v)
	}
	if rec.overlap.Load() {
		t.Error("handler calls overlapped")
	}
}

// TestE2EListOfANamespacedWatch: the cache of a watch on one namespace
// has no namespace index (every object would have the same entry), and
// List still answers for all namespaces, its own, and another (none);
// a watch on all namespaces keeps the index and lists one namespace.
func TestE2EListOfANamespacedWatch(t *testing.T) {
	checkLeaks(t)
	s := startE2E(t, nil, Options{})
	a, b := createNamespace(t, s.admin, "list-a"), createNamespace(t, s.admin, "list-b")
	mustCreateCM(t, s.admin, a, "one", map[string]string{"n": "1"})
	mustCreateCM(t, s.admin, a, "two", map[string]string{"n": "2"})
	mustCreateCM(t, s.admin, b, "three", map[string]string{"n": "3"})

	names := func(objs []*unstructured.Unstructured, err error) string {
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, o := range objs {
			if o.GetNamespace() == a || o.GetNamespace() == b {
				out = append(out, o.GetNamespace()[:len("list-a")]+"/"+o.GetName())
			}
		}
		return strings.Join(out, ",")
	}
	one := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: a}, "one-namespace", &recorder{})
	all := mustWatch(t, s.m, Key{GVR: cmGVR}, "all-namespaces", &recorder{})
	testcluster.Eventually(t, "both watches to sync", func() bool { return one.HasSynced() && all.HasSynced() })
	idx, err := one.indexer()
	if err != nil {
		t.Fatal(err)
	}
	if got := idx.GetIndexers(); len(got) != 0 {
		t.Errorf("the namespaced cache has indexes %v, want none", got)
	}
	if idx, err = all.indexer(); err != nil {
		t.Fatal(err)
	}
	if _, ok := idx.GetIndexers()["namespace"]; !ok {
		t.Errorf("the cache of all namespaces has no namespace index")
	}
	n2, _ := labels.Parse("n=2")
	for _, tt := range []struct {
		w         *Watch
		namespace string
		sel       labels.Selector
		want      string
	}{
		{one, "", nil, "list-a/one,list-a/two"},
		{one, a, nil, "list-a/one,list-a/two"},
		{one, a, n2, "list-a/two"},
		{one, b, nil, ""},
		{all, b, nil, "list-b/three"},
		{all, "", n2, "list-a/two"},
	} {
		if got := names(tt.w.List(tt.namespace, tt.sel)); got != tt.want {
			t.Errorf("%s: List(%q, %v) = %q, want %q", tt.w.key, tt.namespace, tt.sel, got, tt.want)
		}
	}
}
