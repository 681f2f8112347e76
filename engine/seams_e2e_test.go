//go:build e2e

package engine_test

import (
	"fmt"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
)

// Where two features meet (issue 37). Writing kreact.once's marker on an
// object with no annotations calls no onUpdate (docs/rules.md, "Once per
// object").
func TestOnceMarkerCallsNoUpdate(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("seam-once")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: welcome
spec:
  watch:
    - resource: configmaps
      namespaces: [seam-once]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(cm) {
      if (kreact.once(cm)) kreact.log("welcomed " + cm.metadata.name);
    }
    function onUpdate(old, cm, ctx) {
      kreact.log("updated " + cm.metadata.name + " changed=" + ctx.changed.join(","));
    }
`)
	const n = 5
	for i := range n {
		h.configMap("seam-once", fmt.Sprintf("cm-%d", i), nil, nil) // no annotations, no labels
	}
	cms := h.client.Resource(configMaps).Namespace("seam-once")
	testcluster.Eventually(t, "every ConfigMap to carry the once marker", func() bool {
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) != n {
			return false
		}
		for _, cm := range list.Items {
			if _, ok := cm.GetAnnotations()["once.kreact.dev/welcome"]; !ok {
				return false
			}
		}
		return true
	})
	// The marker's watch event has had time to arrive when a later
	// change of another object has been handled.
	h.configMap("seam-once", "last", nil, nil)
	testcluster.Eventually(t, "the last ConfigMap to be welcomed", func() bool { return h.logs.Count("welcomed last") == 1 })
	time.Sleep(time.Second)
	if got := h.logs.Count("welcomed cm-"); got != n {
		t.Errorf("%d welcomes, want %d", got, n)
	}
	if got := h.logs.Count("updated "); got != 0 {
		t.Errorf("writing the once marker called onUpdate %d times, want none", got)
	}
}

// With spec.finalizer, one delete is one onDelete (docs/delivery.md): the
// DELETED event that follows the finalizer's removal is not a second one.
func TestFinalizerDeleteCallsOnDeleteOnce(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("seam-fin")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: goodbye
spec:
  watch:
    - resource: configmaps
      namespaces: [seam-fin]
  finalizer: true
  script: |
    function onAdd(cm) {}
    function onDelete(cm) { kreact.log("goodbye " + cm.metadata.name + " uid=" + cm.metadata.uid); }
`)
	const n = 20
	cms := h.client.Resource(configMaps).Namespace("seam-fin")
	for i := range n {
		h.configMap("seam-fin", fmt.Sprintf("cm-%02d", i), nil, nil)
	}
	testcluster.Eventually(t, "every ConfigMap to carry the finalizer", func() bool {
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) != n {
			return false
		}
		for _, cm := range list.Items {
			if len(cm.GetFinalizers()) == 0 {
				return false
			}
		}
		return true
	})
	for i := range n {
		if err := cms.Delete(t.Context(), fmt.Sprintf("cm-%02d", i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
	testcluster.Eventually(t, "every ConfigMap to go", func() bool {
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		return err == nil && len(list.Items) == 0
	})
	// A second onDelete would follow the DELETED event within milliseconds.
	h.configMap("seam-fin", "last", nil, nil)
	if err := cms.Delete(t.Context(), "last", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the last ConfigMap's onDelete", func() bool { return h.logs.Count("goodbye last") >= 1 })
	time.Sleep(time.Second)
	for i := range n {
		name := fmt.Sprintf("cm-%02d", i)
		if got := h.logs.Count("goodbye " + name + " "); got != 1 {
			t.Errorf("%s: onDelete called %d times, want 1", name, got)
		}
	}
	if got := h.logs.Count("goodbye last "); got != 1 {
		t.Errorf("last: onDelete called %d times, want 1", got)
	}
}

// With spec.finalizer beside another finalizer, one delete is still one
// onDelete: when the other finalizer goes just before kreact removes its
// own (here onDelete itself takes it off, as a controller would its
// own), kreact's removal, made from a cached state that the watch has not
// yet brought up to date, names the wrong place in the list and is
// refused. kreact makes it again from the newer state; it does not call
// onDelete again (found by the chaos checker's p-sel2 beside p-fin).
func TestFinalizerBesideAnotherCallsOnDeleteOnce(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("seam-fin2")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: last-out
spec:
  watch:
    - resource: configmaps
      namespaces: [seam-fin2]
  finalizer: true
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(cm) {}
    function onDelete(cm) {
      kreact.patch(cm, {metadata: {finalizers: ["kreact.dev/last-out"]}});
      kreact.log("goodbye " + cm.metadata.name + " uid=" + cm.metadata.uid);
    }
`)
	const n = 10
	cms := h.client.Resource(configMaps).Namespace("seam-fin2")
	for i := range n {
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		cm.SetName(fmt.Sprintf("cm-%02d", i))
		cm.SetFinalizers([]string{"example.com/other"})
		if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testcluster.Eventually(t, "every ConfigMap to carry both finalizers", func() bool {
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		if err != nil || len(list.Items) != n {
			return false
		}
		for _, cm := range list.Items {
			if len(cm.GetFinalizers()) != 2 {
				return false
			}
		}
		return true
	})
	for i := range n {
		if err := cms.Delete(t.Context(), fmt.Sprintf("cm-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testcluster.Eventually(t, "every ConfigMap to go", func() bool {
		list, err := cms.List(t.Context(), metav1.ListOptions{})
		return err == nil && len(list.Items) == 0
	})
	time.Sleep(time.Second)
	for i := range n {
		name := fmt.Sprintf("cm-%02d", i)
		if got := h.logs.Count("goodbye " + name + " "); got != 1 {
			t.Errorf("%s: onDelete called %d times, want 1", name, got)
		}
	}
}
