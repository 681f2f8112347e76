//go:build e2e

package clientstack_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// The end-to-end tests share one real control plane (etcd and
// kube-apiserver) per test binary.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// A started stack resolves the names a user writes, its informers see
// what the dynamic client writes, its discovery follows a CRD created
// after the start, and Wait returns once its components have stopped.
func TestStartedStackWatchesAndFollowsNewResources(t *testing.T) {
	leaktest.Check(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stack, err := clientstack.Start(ctx, cluster.Config(), clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			cancel()
			_ = stack.Wait()
		}
	}()
	for _, name := range []string{"configmaps", "cm", "ConfigMap"} {
		res, err := stack.Mapper.Resolve(name)
		if err != nil || res.GVR != configMapsGVR {
			t.Errorf("Resolve(%q) = %v, %v; want %v", name, res.GVR, err, configMapsGVR)
		}
	}

	ns := newNamespace(t, stack)
	var mu sync.Mutex
	added := map[string]bool{}
	w, err := stack.Informers.Watch(dynamicinformer.Key{GVR: configMapsGVR, Namespace: ns}, "test", cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			m, err := meta.Accessor(obj)
			if err != nil {
				t.Errorf("an add of %T: %v", obj, err)
				return
			}
			mu.Lock()
			added[m.GetName()] = true
			mu.Unlock()
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "seen"}}}
	if _, err := stack.Client.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the informer sees the ConfigMap", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return added["seen"]
	})

	crd := testcluster.CRD{Group: "clientstack.kreact.dev", Kind: "Gadget", Plural: "gadgets", ShortNames: []string{"gdg"}}
	if err := testcluster.CreateCRD(t.Context(), stack.Client, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), stack.Client, crd) })
	testcluster.Eventually(t, "the mapper resolves the CRD created after the start", func() bool {
		res, err := stack.Mapper.Resolve("gdg")
		return err == nil && res.GVR == crd.GVR()
	})

	w.Stop()
	cancel()
	stopped = true
	if err := stack.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// A stack made by New starts nothing until its Start, which runs until
// its context ends; Start is a lifecycle.Runnable.
func TestNewStackRunsUntilItsContextEnds(t *testing.T) {
	leaktest.Check(t)
	stack, err := clientstack.New(t.Context(), cluster.Config(), clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if stack.Informers == nil {
		t.Fatal("New built no informer manager")
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- stack.Start(ctx) }()
	w, err := stack.Informers.Watch(dynamicinformer.Key{GVR: namespacesGVR}, "test", cache.ResourceEventHandlerFuncs{})
	if err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the watch of namespaces has synced", w.HasSynced)
	w.Stop()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Start: %v", err)
	}
}

// A connected stack resolves names and makes requests, with absolute
// paths on its REST client, and starts nothing: Wait returns at once.
func TestConnectedStackStartsNothing(t *testing.T) {
	leaktest.Check(t)
	stack, err := clientstack.Connect(t.Context(), cluster.Config(), clientstack.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if stack.Informers != nil {
		t.Error("Connect built an informer manager")
	}
	if res, err := stack.Mapper.Resolve("ns"); err != nil || res.GVR != namespacesGVR {
		t.Errorf("Resolve(ns) = %v, %v; want %v", res.GVR, err, namespacesGVR)
	}
	if err := stack.REST.Get().AbsPath("/api/v1/namespaces/default").Do(t.Context()).Error(); err != nil {
		t.Errorf("GET /api/v1/namespaces/default through REST: %v", err)
	}
	if _, err := stack.Metadata.Resource(namespacesGVR).Get(t.Context(), "default", metav1.GetOptions{}); err != nil {
		t.Errorf("get the default namespace's metadata: %v", err)
	}
	if err := stack.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// newNamespace creates a namespace of its own for a test, so that reruns
// (-count) start afresh.
func newNamespace(t *testing.T, stack *clientstack.Stack) string {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := "clientstack-" + hex.EncodeToString(suffix)
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := stack.Client.Resource(namespacesGVR).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}
