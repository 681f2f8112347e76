//go:build e2e

package engine_test

import (
	"reflect"
	"testing"

	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/projection"
)

// TestProjectedRuleSeesOnlyItsFields: a rule with spec.watch[].fields
// runs on objects cut down to those paths and the identity metadata: its
// script finds the listed field and not an unlisted one, and the
// informer's cache holds no more than that.
func TestProjectedRuleSeesOnlyItsFields(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("projected")
	h.mustLoad(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: projected
spec:
  watch:
    - resource: configmaps
      namespaces: [projected]
      fields: [data.keep]
  events: [add]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {labels: {keep: String(obj.data.keep), drop: String(obj.data.drop), app: String(obj.metadata.labels.app)}}});
    }
`)
	h.configMap("projected", "cm", map[string]string{"app": "web"}, map[string]string{"keep": "yes", "drop": "no"})
	testcluster.Eventually(t, "the rule to label the ConfigMap", func() bool {
		_, ok := h.label("projected", "cm", "keep")
		return ok
	})
	for k, want := range map[string]string{"keep": "yes", "drop": "undefined", "app": "web"} {
		if got, _ := h.label("projected", "cm", k); got != want {
			t.Errorf("the script read %s as %q, want %q", k, got, want)
		}
	}

	// A watch with the same fields shares the rule's informer (it
	// restarts nothing) and reads its cache.
	probe, err := h.informers.WatchFields(dynamicinformer.Key{GVR: configMaps, Namespace: "projected"}, "probe",
		cache.ResourceEventHandlerFuncs{}, projection.New(projection.Path{"data", "keep"}))
	if err != nil {
		t.Fatal(err)
	}
	defer probe.Stop()
	testcluster.Eventually(t, "the probe to sync", probe.HasSynced)
	obj, ok, err := probe.Get("projected", "cm")
	if err != nil || !ok {
		t.Fatalf("cached ConfigMap: %v, %v", ok, err)
	}
	if got := obj.Object["data"]; !reflect.DeepEqual(got, map[string]any{"keep": "yes"}) {
		t.Errorf("cached data = %v, want only keep", got)
	}
	if obj.GetUID() == "" || obj.GetLabels()["app"] != "web" {
		t.Errorf("cached metadata lacks the identity: %v", obj.Object["metadata"])
	}
	if _, ok := obj.Object["metadata"].(map[string]any)["creationTimestamp"]; ok {
		t.Error("metadata.creationTimestamp is cached, and is not in the projection")
	}
}
