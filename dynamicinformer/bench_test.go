//go:build e2e

package dynamicinformer

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
)

const (
	benchNamespace = "bench-memory"
	benchObjects   = 2000
)

// BenchmarkCacheMemory compares the heap a cached ConfigMap costs in a
// kreact informer (stripped and compact) with a bare client-go dynamic
// informer on the same objects. The objects look like ones kubectl apply and a
// controller touched: created by server-side apply, labelled by a second
// field manager (two managedFields entries), and carrying a
// last-applied-configuration annotation as large as the object.
//
// Metrics: B/obj-bare and B/obj-kreact (heap after GC, synced minus
// before, per object), kreact/bare (their ratio), B/obj-json (the object
// as the server sends it).
func BenchmarkCacheMemory(b *testing.B) {
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	jsonSize := setupBenchObjects(b, admin)
	src := newFakeSource(cmResource)
	var bare, kreact float64
	b.ResetTimer()
	for range b.N {
		bare += heapPerObject(b, func(ctx context.Context) func() {
			inf := cgdynamicinformer.NewFilteredDynamicInformer(admin, cmGVR, benchNamespace, 0,
				cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, nil).Informer()
			reg, _ := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{})
			done := make(chan struct{})
			go func() { defer close(done); inf.RunWithContext(ctx) }()
			cache.WaitForCacheSync(ctx.Done(), reg.HasSynced)
			return func() { <-done }
		})
		kreact += heapPerObject(b, func(ctx context.Context) func() {
			m := New(admin, src, Options{Logger: discardLogger()})
			done := make(chan struct{})
			go func() { defer close(done); _ = m.Run(ctx) }()
			w, err := m.Watch(Key{GVR: cmGVR, Namespace: benchNamespace}, "bench", cache.ResourceEventHandlerFuncs{})
			if err != nil {
				b.Fatal(err)
			}
			cache.WaitForCacheSync(ctx.Done(), w.HasSynced)
			return func() { <-done }
		})
	}
	b.StopTimer()
	bare /= float64(b.N)
	kreact /= float64(b.N)
	b.ReportMetric(float64(jsonSize), "B/obj-json")
	b.ReportMetric(bare, "B/obj-bare")
	b.ReportMetric(kreact, "B/obj-kreact")
	b.ReportMetric(kreact/bare, "kreact/bare")
}

// heapPerObject measures the live heap that start's informer holds once
// synced, per object. start returns a func that waits for the informer to
// stop after ctx is cancelled.
func heapPerObject(b *testing.B, start func(ctx context.Context) (wait func())) float64 {
	b.Helper()
	ctx, cancel := context.WithCancel(b.Context())
	before := liveHeap()
	wait := start(ctx)
	after := liveHeap()
	cancel()
	wait()
	return float64(int64(after)-int64(before)) / benchObjects
}

func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// setupBenchObjects makes sure benchObjects ConfigMaps exist and returns
// the JSON size of one as the server returns it.
func setupBenchObjects(b *testing.B, admin dynamic.Interface) int {
	b.Helper()
	ns := newObj("v1", "Namespace", "", benchNamespace, nil)
	_, _ = admin.Resource(namespaceGVR).Create(b.Context(), ns, metav1.CreateOptions{})
	cms := admin.Resource(cmGVR).Namespace(benchNamespace)
	list, err := cms.List(b.Context(), metav1.ListOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if len(list.Items) < benchObjects {
		cfg := cluster.Config()
		cfg.QPS, cfg.Burst = 2000, 4000
		setup := dynamic.NewForConfigOrDie(cfg).Resource(cmGVR).Namespace(benchNamespace)
		g, ctx := errgroup.WithContext(b.Context())
		g.SetLimit(32)
		for i := range benchObjects {
			g.Go(func() error { return applyBenchObject(ctx, setup, fmt.Sprintf("app-config-%04d", i)) })
		}
		if err := g.Wait(); err != nil {
			b.Fatal(err)
		}
	}
	obj, err := cms.Get(b.Context(), "app-config-0000", metav1.GetOptions{})
	if err != nil {
		b.Fatal(err)
	}
	if len(obj.GetManagedFields()) < 2 || obj.GetAnnotations()[LastAppliedAnnotation] == "" {
		b.Fatalf("bench object lacks managedFields or last-applied: %v", obj.Object["metadata"])
	}
	raw, _ := json.Marshal(obj.Object)
	return len(raw)
}

// applyBenchObject creates a ConfigMap the way kubectl apply would, then
// labels it as a second actor.
func applyBenchObject(ctx context.Context, cms dynamic.ResourceInterface, name string) error {
	cm := newObj("v1", "ConfigMap", benchNamespace, name, map[string]string{
		"app.kubernetes.io/name": "shop", "app.kubernetes.io/component": "frontend", "app.kubernetes.io/part-of": "shop",
	})
	data := map[string]string{
		"LOG_LEVEL":     "info",
		"FEATURE_FLAG":  "checkout-v2,search-v3,recommendations",
		"DATABASE_URL":  "postgres://shop:5432/orders?sslmode=require&pool_max_conns=20",
		"settings.yaml": strings.Repeat("timeout: 30s\nretries: 3\n", 4),
	}
	_ = unstructured.SetNestedStringMap(cm.Object, data, "data")
	lastApplied, err := json.Marshal(cm.Object)
	if err != nil {
		return err
	}
	cm.SetAnnotations(map[string]string{LastAppliedAnnotation: string(lastApplied)})
	if _, err := cms.Apply(ctx, name, cm, metav1.ApplyOptions{FieldManager: "kubectl", Force: true}); err != nil {
		return err
	}
	patch := []byte(`{"metadata":{"labels":{"example.com/audited":"true"}}}`)
	_, err = cms.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "auditor"})
	return err
}
