//go:build e2e

package dynamicinformer

import (
	"context"
	"reflect"
	"sync/atomic"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"

	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/projection"
)

// TestE2EProjectedWatches: the informer of a key caches the union of its
// watches' fields and nothing else; a watch that needs more restarts it,
// and both handlers then see the wider objects.
func TestE2EProjectedWatches(t *testing.T) {
	checkLeaks(t)
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	ns := createNamespace(t, admin, "projected")
	cm := newObj("v1", "ConfigMap", ns, "cm", map[string]string{"app": "web"})
	_ = unstructured.SetNestedStringMap(cm.Object, map[string]string{"a": "1", "b": "2", "c": "3"}, "data")
	if _, err := admin.Resource(cmGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	s := startE2E(t, nil, Options{})
	key := Key{GVR: cmGVR, Namespace: ns}
	projected := true
	data := func(w *Watch) map[string]any {
		obj, ok, err := w.Get(ns, "cm")
		if err != nil || !ok {
			return nil
		}
		if obj.GetLabels()["app"] != "web" || obj.GetUID() == "" || obj.GetResourceVersion() == "" {
			t.Errorf("identity metadata missing: %v", obj.Object["metadata"])
		}
		if _, ok := obj.Object["metadata"].(map[string]any)["creationTimestamp"]; ok && projected {
			t.Errorf("metadata.creationTimestamp is not in the projection but is cached")
		}
		m, _ := obj.Object["data"].(map[string]any)
		return m
	}

	recA := &recorder{}
	wa, err := s.m.WatchFields(key, "a", recA, projection.New(projection.Path{"data", "a"}))
	if err != nil {
		t.Fatal(err)
	}
	defer wa.Stop()
	testcluster.Eventually(t, "a sync", wa.HasSynced)
	if got := data(wa); !reflect.DeepEqual(got, map[string]any{"a": "1"}) {
		t.Errorf("cached data = %v, want only a", got)
	}

	// b needs data.b: the informer restarts with the union.
	recB := &recorder{}
	wb, err := s.m.WatchFields(key, "b", recB, projection.New(projection.Path{"data", "b"}))
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Stop()
	testcluster.Eventually(t, "the union is cached", func() bool {
		return wb.HasSynced() && reflect.DeepEqual(data(wb), map[string]any{"a": "1", "b": "2"})
	})
	if recB.count("add", "cm") != 1 {
		t.Errorf("b's adds: %+v", recB.snapshot())
	}
	testcluster.Eventually(t, "a sees the restarted informer's objects", func() bool { return recA.count("add", "cm") == 2 })

	// A watch that reads what is cached joins without a restart.
	recC := &recorder{}
	wc, err := s.m.WatchFields(key, "c", recC, projection.New(projection.Path{"data", "a"}))
	if err != nil {
		t.Fatal(err)
	}
	defer wc.Stop()
	testcluster.Eventually(t, "c sync", wc.HasSynced)
	if n := recA.count("add", "cm"); n != 2 {
		t.Errorf("a got %d adds, want 2: a covered watch restarted the informer", n)
	}

	// A watch without fields gets whole objects.
	projected = false
	recW := &recorder{}
	ww := mustWatch(t, s.m, key, "whole", recW)
	defer ww.Stop()
	testcluster.Eventually(t, "whole objects are cached", func() bool {
		return ww.HasSynced() && reflect.DeepEqual(data(ww), map[string]any{"a": "1", "b": "2", "c": "3"})
	})
}

// countingMetadata counts the lists made through a metadata client.
type countingMetadata struct {
	metadata.Interface
	lists *atomic.Int64
}

func (c countingMetadata) Resource(gvr schema.GroupVersionResource) metadata.Getter {
	return countingMetadataResource{c.Interface.Resource(gvr), c.lists}
}

type countingMetadataResource struct {
	metadata.Getter
	lists *atomic.Int64
}

func (c countingMetadataResource) Namespace(ns string) metadata.ResourceInterface {
	return countingMetadataNamespaced{c.Getter.Namespace(ns), c.lists}
}

type countingMetadataNamespaced struct {
	metadata.ResourceInterface
	lists *atomic.Int64
}

func (c countingMetadataNamespaced) List(ctx context.Context, opts metav1.ListOptions) (*metav1.PartialObjectMetadataList, error) {
	c.lists.Add(1)
	return c.ResourceInterface.List(ctx, opts)
}

// TestE2EMetadataOnlyWatch: a watch that reads metadata only is served by
// the metadata client, and its handler gets the resource's apiVersion and
// kind with the identity metadata, and no data.
func TestE2EMetadataOnlyWatch(t *testing.T) {
	checkLeaks(t)
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	ns := createNamespace(t, admin, "metadata-only")
	mustCreateCM(t, admin, ns, "cm", map[string]string{"app": "web"})
	var lists atomic.Int64
	s := startE2E(t, nil, Options{Metadata: countingMetadata{metadata.NewForConfigOrDie(cluster.Config()), &lists}})
	rec := &recorder{}
	w, err := s.m.WatchFields(Key{GVR: cmGVR, Namespace: ns}, "labels", rec, projection.New())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	testcluster.Eventually(t, "sync", w.HasSynced)
	obj, ok, err := w.Get(ns, "cm")
	if err != nil || !ok {
		t.Fatalf("Get: %v %v", ok, err)
	}
	if obj.GetAPIVersion() != "v1" || obj.GetKind() != "ConfigMap" || obj.GetLabels()["app"] != "web" || obj.GetUID() == "" {
		t.Errorf("object = %v", obj.Object)
	}
	if _, has := obj.Object["data"]; has {
		t.Errorf("data is cached: %v", obj.Object)
	}
	if lists.Load() == 0 {
		t.Error("the metadata client made no list")
	}
	if rec.count("add", "cm") != 1 {
		t.Errorf("adds: %+v", rec.snapshot())
	}
}
