//go:build e2e

package actions_test

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/testcluster"
)

// TestSetCondition sets a condition three times on a custom resource with
// a status subresource and on one without: the same status keeps
// lastTransitionTime, a new status moves it, the other conditions stay,
// and a condition that is already there writes nothing (without a status
// subresource, one asked for the generation its own write produced).
func TestSetCondition(t *testing.T) {
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	const old = "2020-01-01T00:00:00Z"
	for _, crd := range []testcluster.CRD{
		{Group: "conditions.kreact.test", Kind: "Widget", Plural: "widgets"},
		{Group: "conditions.kreact.test", Kind: "Gadget", Plural: "gadgets", NoStatus: true},
	} {
		t.Run(crd.Kind, func(t *testing.T) {
			if err := testcluster.CreateCRD(t.Context(), dyn, crd); err != nil {
				t.Fatal(err)
			}
			createNamespace(t, "conditions")
			client := dyn.Resource(crd.GVR()).Namespace("conditions")
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": crd.Group + "/v1", "kind": crd.Kind,
				"metadata": map[string]any{"name": "one", "namespace": "conditions"},
				"spec":     map[string]any{"size": int64(1)},
				"status": map[string]any{"conditions": []any{
					map[string]any{"type": "Synced", "status": "True", "lastTransitionTime": old},
					map[string]any{"type": "Ready", "status": "True", "reason": "Up", "lastTransitionTime": old},
				}},
			}}
			created, err := client.Create(t.Context(), obj, metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if !crd.NoStatus {
				// Create ignores the status of a resource with a status
				// subresource.
				obj.SetResourceVersion(created.GetResourceVersion())
				if _, err := client.UpdateStatus(t.Context(), obj, metav1.UpdateOptions{}); err != nil {
					t.Fatal(err)
				}
			}
			q, res := startQueue(t, actions.Options{Name: "conditions"})
			set := func(c actions.Condition) (conditions []any, resourceVersion string) {
				t.Helper()
				a := actions.Action{Rule: "test", Verb: actions.SetCondition, Resource: crd.GVR(), Kind: crd.Kind, APIVersion: crd.Group + "/v1",
					Namespaced: true, Namespace: "conditions", Name: "one", Condition: &c}
				if !crd.NoStatus {
					a.Subresource = "status"
				}
				want := res.count(actions.Succeeded) + 1
				q.Enqueue(a)
				testcluster.Eventually(t, "the condition to be set", func() bool { return res.count(actions.Succeeded) == want })
				if n := res.count(actions.Failed) + res.count(actions.GaveUp); n > 0 {
					t.Fatalf("%d actions failed", n)
				}
				got, err := client.Get(t.Context(), "one", metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				conditions, _, _ = unstructured.NestedSlice(got.Object, "status", "conditions")
				return conditions, got.GetResourceVersion()
			}
			byType := func(conditions []any, typ string) map[string]any {
				for _, c := range conditions {
					if m, _ := c.(map[string]any); m["type"] == typ {
						return m
					}
				}
				t.Fatalf("no condition %s in %v", typ, conditions)
				return nil
			}

			// The same status with a new reason: written, the time kept.
			// Without a status subresource the write moves the generation
			// on, and the condition records the generation it produces.
			conditions, rv := set(actions.Condition{Type: "Ready", Status: "True", Reason: "StillUp", ObservedGeneration: 1})
			ready := byType(conditions, "Ready")
			generation := int64(1)
			if crd.NoStatus {
				generation = 2
			}
			if ready["reason"] != "StillUp" || ready["lastTransitionTime"] != old || ready["observedGeneration"] != generation {
				t.Errorf("after the same status: Ready = %v, want reason StillUp, observedGeneration %d, lastTransitionTime %s", ready, generation, old)
			}
			// Again, identical, for the object's generation now: nothing
			// is written.
			conditions, rv2 := set(actions.Condition{Type: "Ready", Status: "True", Reason: "StillUp", ObservedGeneration: generation})
			if rv2 != rv {
				t.Errorf("an unchanged condition was written: resourceVersion %s, then %s", rv, rv2)
			}
			if ready := byType(conditions, "Ready"); ready["lastTransitionTime"] != old {
				t.Errorf("after the same condition: lastTransitionTime %v, want %s", ready["lastTransitionTime"], old)
			}
			// A new status moves the time.
			conditions, _ = set(actions.Condition{Type: "Ready", Status: "False", Reason: "Down"})
			ready = byType(conditions, "Ready")
			if ready["status"] != "False" || ready["reason"] != "Down" || ready["lastTransitionTime"] == old || ready["lastTransitionTime"] == "" {
				t.Errorf("after a new status: Ready = %v, want status False, reason Down and a new lastTransitionTime", ready)
			}
			if _, ok := ready["observedGeneration"]; ok {
				t.Errorf("observedGeneration kept when the condition leaves it out: %v", ready)
			}
			// The other condition is kept, before it, and a new type goes last.
			conditions, _ = set(actions.Condition{Type: "Healthy", Status: "Unknown"})
			var types []any
			for _, c := range conditions {
				types = append(types, c.(map[string]any)["type"])
			}
			if len(types) != 3 || types[0] != "Synced" || types[1] != "Ready" || types[2] != "Healthy" {
				t.Errorf("condition types = %v, want [Synced Ready Healthy]", types)
			}
			if synced := byType(conditions, "Synced"); synced["status"] != "True" || synced["lastTransitionTime"] != old {
				t.Errorf("Synced = %v, want it unchanged", synced)
			}
		})
	}
}
