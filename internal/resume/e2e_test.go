//go:build e2e

package resume

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	clientgofeatures "k8s.io/client-go/features"
	clientgofeaturestesting "k8s.io/client-go/features/testing"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

var cmGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

// listCall is one list a ListWatch sent, and what came back.
type listCall struct {
	options metav1.ListOptions
	items   int
}

// recordingResource passes lists and watches to the API server and
// records the lists.
type recordingResource struct {
	dynamic.ResourceInterface
	mu    sync.Mutex
	lists []listCall
}

func (r *recordingResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.ResourceInterface.List(ctx, opts)
	if err == nil {
		r.mu.Lock()
		r.lists = append(r.lists, listCall{opts, len(l.Items)})
		r.mu.Unlock()
	}
	return l, err
}

func (r *recordingResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	return r.ResourceInterface.Watch(ctx, opts)
}

// The reflector's first list asks for resourceVersion "0", which the API
// server's watch cache serves whole whatever the limit: a ListWatch lists
// in pages of PageSize instead, and hands the reflector one list of
// every object it keeps.
func TestE2EListsInPages(t *testing.T) {
	client := dynamic.NewForConfigOrDie(cluster.Config())
	ns := "pages"
	createNamespace(t, client, ns)
	const n = 2*PageSize + 100
	var g errgroup.Group
	g.SetLimit(16)
	for i := range n {
		g.Go(func() error {
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": fmt.Sprintf("cm-%04d", i), "namespace": ns}}}
			_, err := client.Resource(cmGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	// shaped stands for what an informer caches instead of the decoded
	// object.
	shaped := func(u *unstructured.Unstructured) Object {
		return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(),
			UID: u.GetUID(), ResourceVersion: u.GetResourceVersion()}}
	}
	for _, tc := range []struct {
		name  string
		keep  func(*unstructured.Unstructured) bool
		shape func(*unstructured.Unstructured) Object
		want  int
	}{
		{"all", nil, nil, n},
		{"kept", func(u *unstructured.Unstructured) bool { return strings.HasSuffix(u.GetName(), "0") }, nil, n / 10},
		{"shaped", func(u *unstructured.Unstructured) bool { return strings.HasSuffix(u.GetName(), "0") }, shaped, n / 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordingResource{ResourceInterface: client.Resource(cmGVR).Namespace(ns)}
			lw := New(rec, func(l *unstructured.UnstructuredList) *[]unstructured.Unstructured { return &l.Items },
				Options[*unstructured.Unstructured]{Keep: tc.keep, Shape: tc.shape})
			// What client-go's reflector asks for first.
			obj, err := lw.ListWithContext(t.Context(), metav1.ListOptions{ResourceVersion: "0", Limit: 500})
			if err != nil {
				t.Fatal(err)
			}
			list := obj.(*ObjectList)
			for _, item := range list.Items {
				_, isShaped := item.(*metav1.PartialObjectMetadata)
				if isShaped != (tc.shape != nil) {
					t.Fatalf("list item is a %T", item)
				}
			}
			if len(list.Items) != tc.want || list.GetContinue() != "" || list.GetResourceVersion() == "" {
				t.Errorf("list of %d items, continue %q, resourceVersion %q; want %d items, no continue, a resourceVersion",
					len(list.Items), list.GetContinue(), list.GetResourceVersion(), tc.want)
			}
			if lw.Len() != tc.want {
				t.Errorf("Len() = %d, want %d", lw.Len(), tc.want)
			}
			if len(rec.lists) != 3 {
				t.Errorf("%d lists sent, want 3 pages", len(rec.lists))
			}
			for i, l := range rec.lists {
				if l.options.Limit != PageSize || l.items > PageSize || (i > 0) != (l.options.Continue != "") {
					t.Errorf("list %d: limit %d, continue %q, %d items; want pages of %d", i, l.options.Limit, l.options.Continue, l.items, PageSize)
				}
			}
		})
	}
}

// gatedResource passes lists and watches to the API server, records the
// resourceVersion of each list, and holds the watches opened while it is
// held. Its watches ask for no bookmarks, so that nothing but the test's
// own changes reaches a reflector the test holds.
type gatedResource struct {
	dynamic.ResourceInterface
	mu    sync.Mutex
	open  chan struct{}
	lists []string
}

func newGatedResource(ri dynamic.ResourceInterface) *gatedResource {
	r := &gatedResource{ResourceInterface: ri, open: make(chan struct{})}
	close(r.open)
	return r
}

func (r *gatedResource) hold() {
	r.mu.Lock()
	r.open = make(chan struct{})
	r.mu.Unlock()
}

func (r *gatedResource) release() {
	r.mu.Lock()
	close(r.open)
	r.mu.Unlock()
}

// listed returns the resourceVersions of the lists made so far.
func (r *gatedResource) listed() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.lists)
}

func (r *gatedResource) List(ctx context.Context, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	l, err := r.ResourceInterface.List(ctx, opts)
	if err == nil {
		r.mu.Lock()
		r.lists = append(r.lists, l.GetResourceVersion())
		r.mu.Unlock()
	}
	return l, err
}

func (r *gatedResource) Watch(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
	r.mu.Lock()
	open := r.open
	r.mu.Unlock()
	select {
	case <-open:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	opts.AllowWatchBookmarks = false
	return r.ResourceInterface.Watch(ctx, opts)
}

// readStore is an informer's store that calls read, once, after the
// ListWatch first asks it for its resourceVersion or its objects.
type readStore struct {
	Store
	once sync.Once
	read func()
}

func (s *readStore) LastStoreSyncResourceVersion() string {
	defer s.once.Do(s.read)
	return s.Store.LastStoreSyncResourceVersion()
}

func (s *readStore) List() []any {
	defer s.once.Do(s.read)
	return s.Store.List()
}

// A relist after an expired watch diffs the new list against the
// informer's store, which may not yet have applied the last events the
// reflector was handed. Here the reflector is held (in the informer's
// transform) while it hands the Added of "b" to the informer's queue, so
// the store has not got "b"; the API server restarts, so that the watch,
// which resumes at b's resourceVersion, has expired (the new watch cache
// starts after it); and "b" is deleted meanwhile. The reflector is let go
// as soon as the relist reads the store, whatever it reads first: a
// relist that diffed without waiting for the store to apply the Added
// has read a store without "b", sends no delete, and "b" stays in the
// cache for good.
func TestE2ERelistWaitsForTheStore(t *testing.T) {
	client := dynamic.NewForConfigOrDie(cluster.Config())
	ns := "relist"
	createNamespace(t, client, ns)
	cms := client.Resource(cmGVR).Namespace(ns)
	createCM := func(name string) { createConfigMap(t, cms, ns, name) }
	createCM("a")

	res := newGatedResource(cms)
	lw := New(res, func(l *unstructured.UnstructuredList) *[]unstructured.Unstructured { return &l.Items },
		Options[*unstructured.Unstructured]{})
	informer := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	held := holdInTransform(t, informer, "b")
	defer held.release()
	lw.SetStore(&readStore{Store: informer.GetIndexer(), read: held.release})
	var mu sync.Mutex
	deleted := map[string]int{}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: func(obj any) {
		if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = tomb.Obj
		}
		mu.Lock()
		deleted[obj.(*unstructured.Unstructured).GetName()]++
		mu.Unlock()
	}}); err != nil {
		t.Fatal(err)
	}
	runSynced(t, informer)

	createCM("b")
	held.wait(t)
	expireWhileDeleting(t, client, res, ns, "b")

	testcluster.Eventually(t, "the relist after the expired watch", func() bool { return len(res.listed()) >= 2 })
	relisted := res.listed()[1]
	store := informer.GetIndexer()
	testcluster.Eventually(t, "the store to apply the relist", func() bool {
		return store.LastStoreSyncResourceVersion() == relisted
	})
	if _, found, _ := store.GetByKey(ns + "/b"); found {
		t.Fatalf("b is still in the cache after the relist at %s, which does not list it", relisted)
	}
	if _, found, _ := store.GetByKey(ns + "/a"); !found {
		t.Errorf("a is not in the cache after the relist")
	}
	if lw.Len() != 1 {
		t.Errorf("Len() = %d after the relist, want 1", lw.Len())
	}
	testcluster.Eventually(t, "the handler to be told b was deleted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return deleted["b"] == 1
	})
}

// createNamespace creates the namespace name.
func createNamespace(t *testing.T, client dynamic.Interface, name string) {
	t.Helper()
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// createConfigMap creates the ConfigMap ns/name.
func createConfigMap(t *testing.T, cms dynamic.ResourceInterface, ns, name string) {
	t.Helper()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns}}}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// expireWhileDeleting expires the watches of res and deletes ns/name
// while none is open: it holds res's watches, restarts the API server
// after a write that res's watches do not see (so the watch cache it
// starts with begins after every resourceVersion they saw: a watch
// resumed from one has expired), deletes the ConfigMap, and lets the
// watches go.
func expireWhileDeleting(t *testing.T, client dynamic.Interface, res *gatedResource, ns, name string) {
	t.Helper()
	createNamespace(t, client, ns+"-elsewhere")
	res.hold()
	if err := cluster.StopAPIServer(); err != nil {
		t.Fatalf("stop API server: %v", err)
	}
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatalf("start API server: %v", err)
	}
	if err := client.Resource(cmGVR).Namespace(ns).Delete(t.Context(), name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	res.release()
}

// Without client-go's AtomicFIFO feature gate, an informer's store does
// not say which events it has applied, so a relist could not tell what
// to diff against: an expired watch is handed to the reflector, which
// lists again and replaces its store itself, and the ListWatch says why
// (Options.Transient). The informer still sees the delete.
func TestE2EExpiredWatchWithoutAtomicFIFO(t *testing.T) {
	clientgofeaturestesting.SetFeatureDuringTest(t, clientgofeatures.AtomicFIFO, false)
	client := dynamic.NewForConfigOrDie(cluster.Config())
	ns := "no-atomic-fifo"
	createNamespace(t, client, ns)
	cms := client.Resource(cmGVR).Namespace(ns)
	createConfigMap(t, cms, ns, "a")
	createConfigMap(t, cms, ns, "b")

	res := newGatedResource(cms)
	var told transientLog
	lw := New(res, func(l *unstructured.UnstructuredList) *[]unstructured.Unstructured { return &l.Items },
		Options[*unstructured.Unstructured]{Transient: told.add})
	informer := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	lw.SetStore(informer.GetIndexer())
	runSynced(t, informer)

	expireWhileDeleting(t, client, res, ns, "b")
	waitReflectorRelisted(t, informer.GetStore(), ns)
	if !told.saw(ErrNoStoreVersion) {
		t.Errorf("Transient was told %v, want ErrNoStoreVersion", told.errs())
	}
}

// TestE2ERelistGivesWayToAStoreThatLags holds the informer's processing
// of an Added past the relist's wait for the store: the relist gives up
// (ErrStoreBehind), the reflector lists again itself, and the delete is
// still delivered.
func TestE2ERelistGivesWayToAStoreThatLags(t *testing.T) {
	client := dynamic.NewForConfigOrDie(cluster.Config())
	ns := "relist-lags"
	createNamespace(t, client, ns)
	cms := client.Resource(cmGVR).Namespace(ns)
	createConfigMap(t, cms, ns, "a")

	res := newGatedResource(cms)
	var told transientLog
	lw := New(res, func(l *unstructured.UnstructuredList) *[]unstructured.Unstructured { return &l.Items },
		Options[*unstructured.Unstructured]{Transient: told.add})
	lw.storeWait = 200 * time.Millisecond
	informer := cache.NewSharedIndexInformer(lw, &unstructured.Unstructured{}, 0, cache.Indexers{})
	held := holdInTransform(t, informer, "b")
	defer held.release()
	lw.SetStore(informer.GetIndexer())
	runSynced(t, informer)

	createConfigMap(t, cms, ns, "b")
	held.wait(t)
	expireWhileDeleting(t, client, res, ns, "b")
	testcluster.Eventually(t, "the relist to give way to the reflector's", func() bool { return told.saw(ErrStoreBehind) })
	held.release()

	waitReflectorRelisted(t, informer.GetStore(), ns)
}

// held is an object that holdInTransform holds in the informer's
// transform.
type held struct {
	reached, letGo chan struct{}
	once           sync.Once
}

// holdInTransform holds the informer's reflector in its transform the
// first time it hands over the object named name, before the informer
// queues it, until release.
func holdInTransform(t *testing.T, informer cache.SharedIndexInformer, name string) *held {
	t.Helper()
	h := &held{reached: make(chan struct{}), letGo: make(chan struct{})}
	var hold sync.Once
	if err := informer.SetTransform(func(obj any) (any, error) {
		if u, ok := obj.(*unstructured.Unstructured); ok && u.GetName() == name {
			hold.Do(func() {
				close(h.reached)
				<-h.letGo
			})
		}
		return obj, nil
	}); err != nil {
		t.Fatal(err)
	}
	return h
}

// wait waits until the reflector is held.
func (h *held) wait(t *testing.T) {
	t.Helper()
	select {
	case <-h.reached:
	case <-time.After(90 * time.Second):
		t.Fatal("timed out waiting for the reflector to hand the object over")
	}
}

// release lets the reflector go; later calls do nothing.
func (h *held) release() { h.once.Do(func() { close(h.letGo) }) }

// runSynced runs informer until the test ends and waits for it to sync.
func runSynced(t *testing.T, informer cache.SharedIndexInformer) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	var running sync.WaitGroup
	running.Go(func() { informer.RunWithContext(ctx) })
	t.Cleanup(func() {
		cancel()
		running.Wait()
	})
	testcluster.Eventually(t, "the informer to sync", informer.HasSynced)
}

// transientLog records what a ListWatch's Options.Transient is told.
type transientLog struct {
	mu   sync.Mutex
	told []error
}

func (l *transientLog) add(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.told = append(l.told, err)
}

// saw reports whether an error that is target was told.
func (l *transientLog) saw(target error) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.ContainsFunc(l.told, func(err error) bool { return errors.Is(err, target) })
}

func (l *transientLog) errs() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.told)
}

// waitReflectorRelisted waits until the reflector's own relist, after an
// expired watch that deleted ns/b, has removed b from store, and checks
// that ns/a is still there.
func waitReflectorRelisted(t *testing.T, store cache.Store, ns string) {
	t.Helper()
	testcluster.Eventually(t, "the reflector's relist to delete b", func() bool {
		_, found, _ := store.GetByKey(ns + "/b")
		return !found
	})
	if _, found, _ := store.GetByKey(ns + "/a"); !found {
		t.Errorf("a is not in the cache after the relist")
	}
}
