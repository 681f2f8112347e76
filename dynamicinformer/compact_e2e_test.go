//go:build e2e

package dynamicinformer

import (
	"testing"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestE2EGetNewer: GetNewer returns the cached object only for the same
// incarnation at another resourceVersion.
func TestE2EGetNewer(t *testing.T) {
	checkLeaks(t)
	admin := dynamic.NewForConfigOrDie(cluster.Config())
	ns := createNamespace(t, admin, "newer")
	first := mustCreateCM(t, admin, ns, "cm", nil)
	s := startE2E(t, nil, Options{})
	w := mustWatch(t, s.m, Key{GVR: cmGVR, Namespace: ns}, "newer", &recorder{})
	defer w.Stop()
	testcluster.Eventually(t, "sync", w.HasSynced)
	if obj, ok, err := w.GetNewer(ns, "cm", first.GetUID(), first.GetResourceVersion()); ok || err != nil || obj != nil {
		t.Errorf("same state: %v %v %v", obj, ok, err)
	}
	if _, ok, _ := w.GetNewer(ns, "cm", "another-uid", "1"); ok {
		t.Error("another incarnation was returned")
	}
	second := mustUpdateCM(t, admin, ns, "cm", "v2")
	testcluster.Eventually(t, "the update to be cached", func() bool {
		obj, ok, err := w.GetNewer(ns, "cm", first.GetUID(), first.GetResourceVersion())
		return err == nil && ok && obj.GetResourceVersion() == second.GetResourceVersion() && obj.Object["data"].(map[string]any)["k"] == "v2"
	})
	if _, ok, _ := w.GetNewer(ns, "missing", first.GetUID(), "1"); ok {
		t.Error("a missing object was returned")
	}
}
