//go:build e2e

package engine_test

import (
	"context"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
)

// widgetsCRD is the Widget CRD serving the given versions; the last one is
// stored.
func widgetsCRD(versions ...string) *unstructured.Unstructured {
	crd := testcluster.CRD{Group: "versions.kreact.dev", Kind: "Widget", Plural: "widgets"}.Object()
	var vs []any
	for i, v := range versions {
		vs = append(vs, map[string]any{
			"name": v, "served": true, "storage": i == len(versions)-1,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
		})
	}
	_ = unstructured.SetNestedSlice(crd.Object, vs, "spec", "versions")
	return crd
}

// A rule names a resource, not a version: when the version it runs on
// stops being served, in place or by deleting and recreating the CRD, it
// moves to the served one with one log line and keeps reacting.
func TestRuleFollowsTheServedVersion(t *testing.T) {
	h := start(t, engine.Options{})
	crds := h.client.Resource(testcluster.CRDGVR)
	const name = "widgets.versions.kreact.dev"
	createCRD := func(obj *unstructured.Unstructured) {
		t.Helper()
		testcluster.Eventually(t, "the CRD to be created", func() bool {
			_, err := crds.Create(t.Context(), obj, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err)
		})
	}
	// Not t.Context(): it has ended when cleanups run.
	deleteCRD := func() {
		t.Helper()
		ctx := context.Background()
		testcluster.Eventually(t, "the CRD to be deleted", func() bool {
			err := crds.Delete(ctx, name, metav1.DeleteOptions{})
			if err != nil && !apierrors.IsNotFound(err) {
				return false
			}
			_, err = crds.Get(ctx, name, metav1.GetOptions{})
			return apierrors.IsNotFound(err)
		})
	}
	deleteCRD() // left by an earlier run (-count)
	createCRD(widgetsCRD("v1"))
	t.Cleanup(deleteCRD)

	h.namespace("widgets")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: widgets
spec:
  watch:
    - resource: widgets.versions.kreact.dev
      namespaces: [widgets]
  events: [add]
  permissions:
    - resources: [widgets.versions.kreact.dev]
      verbs: [patch]
  script: |
    function onAdd(obj) {
      kreact.patch(obj, {metadata: {annotations: {seen: obj.apiVersion}}});
    }
`)
	// reacted creates a widget through version v and waits until the rule
	// has annotated it.
	reacted := func(v, widget string) {
		t.Helper()
		res := h.client.Resource(schema.GroupVersionResource{Group: "versions.kreact.dev", Version: v, Resource: "widgets"}).Namespace("widgets")
		w := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "versions.kreact.dev/" + v, "kind": "Widget", "metadata": map[string]any{"name": widget}}}
		testcluster.Eventually(t, widget+" to be created through "+v, func() bool {
			_, err := res.Create(t.Context(), w, metav1.CreateOptions{})
			return err == nil || apierrors.IsAlreadyExists(err)
		})
		testcluster.Eventually(t, "the rule to annotate "+widget, func() bool {
			obj, err := res.Get(t.Context(), widget, metav1.GetOptions{})
			return err == nil && obj.GetAnnotations()["seen"] != ""
		})
	}
	reacted("v1", "w1")
	// v2 is added: the rule stays on v1, which is still served.
	testcluster.Eventually(t, "the CRD to serve v2 too", func() bool {
		crd, err := crds.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		_ = unstructured.SetNestedField(crd.Object, widgetsCRD("v2", "v1").Object["spec"].(map[string]any)["versions"], "spec", "versions")
		_, err = crds.Update(t.Context(), crd, metav1.UpdateOptions{})
		return err == nil
	})
	reacted("v2", "w1b")
	if n := h.logs.Count("rule restarted on the served version"); n != 0 {
		t.Errorf("the rule moved while its version was still served")
	}

	// In place: v1 is no longer served, v2 is stored.
	testcluster.Eventually(t, "the CRD to drop v1", func() bool {
		crd, err := crds.Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return false
		}
		_ = unstructured.SetNestedSlice(crd.Object, []any{map[string]any{
			"name": "v2", "served": true, "storage": true,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
		}, map[string]any{
			"name": "v1", "served": false, "storage": false,
			"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
		}}, "spec", "versions")
		_, err = crds.Update(t.Context(), crd, metav1.UpdateOptions{})
		return err == nil
	})
	reacted("v2", "w2")
	// The watch on v1 may outlive v1 in discovery for a moment, and
	// annotate w2 itself: the move comes when discovery notices.
	testcluster.Eventually(t, "the rule to move to v2", func() bool {
		return h.logs.Count("rule restarted on the served version", "v2, Resource=widgets") == 1
	})
	if n := h.logs.Count("rule restarted on the served version"); n != 1 {
		t.Errorf("%d log lines about the move to v2, want 1", n)
	}

	// Deleted and recreated, serving only v3.
	deleteCRD()
	createCRD(widgetsCRD("v3"))
	reacted("v3", "w3")
	testcluster.Eventually(t, "the rule to move to v3", func() bool {
		return h.logs.Count("rule restarted on the served version", "v3, Resource=widgets") == 1
	})
	if n := h.logs.Count("rule restarted on the served version"); n != 2 {
		t.Errorf("%d log lines about moving versions, want 2", n)
	}
	// An action queued for the old version just before it went may fail
	// (the API server no longer serves it); the restart's initial adds
	// repeat it on the new version. Nothing else may fail.
	for _, line := range strings.Split(h.logs.String(), "\n") {
		if strings.Contains(line, "level=ERROR") && !strings.Contains(line, "could not find the requested resource") {
			t.Errorf("moving versions logged an error: %s", line)
		}
	}
}
