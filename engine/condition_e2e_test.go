//go:build e2e

package engine_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/testcluster"
)

// eventTally is an engine.Observer that counts the Event actions that
// succeeded, by reason.
type eventTally struct {
	mu sync.Mutex
	n  map[string]int
}

var _ engine.Observer = (*eventTally)(nil)

func (c *eventTally) ActionResult(r actions.Result) {
	if r.Action.Verb != actions.Event || r.Outcome != actions.Succeeded {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n[r.Action.Reason]++
}
func (c *eventTally) count(reason string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n[reason]
}
func (c *eventTally) Event(string, string, event.Type)                     {}
func (c *eventTally) HandlerCall(string, event.Type, time.Duration, error) {}
func (c *eventTally) ChangesDropped(string, int)                           {}
func (c *eventTally) HandlerGivenUp(string, event.Type, error)             {}

// Issue 37: a rule whose onAdd and onUpdate set a condition, with the
// default observedGeneration, writes it once and then nothing, on a
// custom resource with a status subresource and on one without, where the
// write itself moves metadata.generation on. The condition written
// records the generation of the object as it stands after the write.
//
// "Then nothing" is checked without timing: once the condition is there, a
// label (which moves no generation) makes the rule set the condition
// again and then record an Event; actions on one object run in order, so
// when the Event is done, so is the condition before it, and the object
// must still be at the resourceVersion the label gave it.
func TestSetConditionWritesOnceAndSettles(t *testing.T) {
	for _, crd := range []testcluster.CRD{
		{Group: "settle.kreact.test", Kind: "Widget", Plural: "widgets"},
		{Group: "settle.kreact.test", Kind: "Gadget", Plural: "gadgets", NoStatus: true},
	} {
		t.Run(crd.Kind, func(t *testing.T) {
			tally := &eventTally{n: map[string]int{}}
			h := start(t, engine.Options{Observer: tally})
			if err := testcluster.CreateCRD(t.Context(), h.client, crd); err != nil {
				t.Fatal(err)
			}
			ns := "settle-" + crd.Plural
			h.namespace(ns)
			resource := crd.Plural + "." + crd.Group
			if err := h.load(fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: ready
spec:
  watch:
    - resource: %[1]s
      namespaces: [%[2]s]
  permissions:
    - resources: [%[1]s]
      verbs: [condition, patch, event]
  script: |
    function onAdd(obj) { onUpdate(null, obj); }
    function onUpdate(old, obj) {
      kreact.setCondition(obj, {type: "Ready", status: "True", reason: "Seen"});
      if ((obj.metadata.labels || {}).final) {
        kreact.event(obj, {reason: "Final", message: obj.metadata.labels.final});
      }
    }
`, resource, ns)); err != nil {
				t.Fatal(err)
			}
			testcluster.Eventually(t, "the rule to run", func() bool {
				st := h.engine.Status()
				return len(st) == 1 && st[0].Running && st[0].Synced
			})

			client := h.client.Resource(crd.GVR()).Namespace(ns)
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": crd.Group + "/v1", "kind": crd.Kind,
				"metadata": map[string]any{"name": "one", "namespace": ns},
				"spec":     map[string]any{"size": int64(1)},
			}}
			if _, err := client.Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			ready := func(obj *unstructured.Unstructured) map[string]any {
				conditions, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
				for _, c := range conditions {
					if m, _ := c.(map[string]any); m["type"] == "Ready" {
						return m
					}
				}
				return nil
			}
			testcluster.Eventually(t, "the condition to be set", func() bool {
				got, err := client.Get(t.Context(), "one", metav1.GetOptions{})
				return err == nil && ready(got) != nil
			})

			labelled, err := client.Patch(t.Context(), "one", "application/merge-patch+json",
				[]byte(`{"metadata":{"labels":{"final":"yes"}}}`), metav1.PatchOptions{})
			if err != nil {
				t.Fatal(err)
			}
			testcluster.Eventually(t, "the rule's call on the labelled object to be done", func() bool { return tally.count("Final") > 0 })
			got, err := client.Get(t.Context(), "one", metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// One write of the condition: it moves the generation of a
			// resource without a status subresource, once.
			wantGeneration := int64(1)
			if crd.NoStatus {
				wantGeneration = 2
			}
			if got.GetResourceVersion() != labelled.GetResourceVersion() || got.GetGeneration() != wantGeneration {
				t.Errorf("after the condition was set, the object was written again: resourceVersion %s when labelled, %s now; generation %d, want %d",
					labelled.GetResourceVersion(), got.GetResourceVersion(), got.GetGeneration(), wantGeneration)
			}
			c := ready(got)
			if og, _ := c["observedGeneration"].(int64); og != got.GetGeneration() || c["status"] != "True" || c["reason"] != "Seen" {
				t.Errorf("Ready = %v, want status True, reason Seen, observedGeneration %d (the object's generation)", c, got.GetGeneration())
			}
		})
	}
}
