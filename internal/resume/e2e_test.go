//go:build e2e

package resume

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"

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
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}).Create(t.Context(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
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
			for _, k := range lw.known {
				if _, isShaped := k.object.(*metav1.PartialObjectMetadata); isShaped != (tc.shape != nil) {
					t.Fatalf("known object is a %T", k.object)
				}
			}
			if len(list.Items) != tc.want || list.GetContinue() != "" || list.GetResourceVersion() == "" {
				t.Errorf("list of %d items, continue %q, resourceVersion %q; want %d items, no continue, a resourceVersion",
					len(list.Items), list.GetContinue(), list.GetResourceVersion(), tc.want)
			}
			if len(lw.known) != tc.want {
				t.Errorf("%d objects known, want %d", len(lw.known), tc.want)
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
