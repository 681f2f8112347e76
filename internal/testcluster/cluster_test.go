//go:build e2e

package testcluster_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apimachinery/pkg/watch"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// TestSmokeCRDLifecycle walks a CRD through its life against the real API
// server: create, Established, a custom resource listed and watched, delete,
// gone from discovery.
func TestSmokeCRDLifecycle(t *testing.T) {
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	disc := cgdiscovery.NewDiscoveryClientForConfigOrDie(cluster.Config())
	crd := testcluster.CRD{Group: "smoke.kreact.dev", Kind: "Widget", Plural: "widgets", ShortNames: []string{"wd"}}

	if err := testcluster.CreateCRD(ctx, dyn, crd); err != nil {
		t.Fatal(err)
	}
	widgets := dyn.Resource(crd.GVR()).Namespace("default")
	// Discovery of a new CRD is eventually consistent with Established.
	var watcher watch.Interface
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		// The watch must outlive the poll, so it gets the test's context.
		w, err := widgets.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		watcher = w
		return true, nil
	})
	if err != nil {
		t.Fatalf("watch widgets: %v", err)
	}
	defer watcher.Stop()

	w := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "smoke.kreact.dev/v1", "kind": "Widget",
		"metadata": map[string]any{"name": "w1"},
		"spec":     map[string]any{"size": int64(3)},
	}}
	if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create widget: %v", err)
	}
	list, err := widgets.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 || list.Items[0].GetName() != "w1" {
		t.Fatalf("list widgets = %v, %v; want w1", list, err)
	}
	select {
	case ev := <-watcher.ResultChan():
		obj, _ := ev.Object.(*unstructured.Unstructured)
		if ev.Type != watch.Added || obj == nil || obj.GetName() != "w1" {
			t.Fatalf("first watch event = %s %v, want ADDED w1", ev.Type, ev.Object)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no watch event for the new widget")
	}

	if err := testcluster.DeleteCRD(ctx, dyn, crd); err != nil {
		t.Fatal(err)
	}
	gv := schema.GroupVersion{Group: crd.Group, Version: "v1"}.String()
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 30*time.Second, true, func(context.Context) (bool, error) {
		_, err := disc.ServerResourcesForGroupVersion(gv)
		return err != nil, nil
	})
	if err != nil {
		t.Fatalf("%s still served by discovery after the CRD was deleted", gv)
	}
}

// TestRestartAPIServer stops and starts the API server; a client made before
// the restart reconnects and lists.
func TestRestartAPIServer(t *testing.T) {
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	namespaces := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	if _, err := namespaces.List(ctx, metav1.ListOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := cluster.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	if _, err := namespaces.List(ctx, metav1.ListOptions{}); err == nil {
		t.Fatal("list succeeded with the API server stopped")
	}
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	list, err := namespaces.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("list after restart: %v", err)
	}
	if len(list.Items) == 0 {
		t.Fatal("no namespaces after restart")
	}
}
