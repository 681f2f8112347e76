package engine

import (
	"testing"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/projection"
)

// TestSamePlanComparesFields: a rule whose informers would keep other
// fields is restarted, as one whose informers differ.
func TestSamePlanComparesFields(t *testing.T) {
	replicas := projection.New(projection.Path{"spec", "replicas"})
	plan := func(f projection.Fields) []delivery.Informer { return []delivery.Informer{{Handled: true, Fields: f}} }
	if !samePlan(plan(replicas), plan(projection.New(projection.Path{"spec", "replicas"}))) {
		t.Error("equal fields: plans differ")
	}
	if samePlan(plan(replicas), plan(projection.Fields{})) {
		t.Error("projected and whole: plans are the same")
	}
	if samePlan(plan(replicas), plan(projection.New())) {
		t.Error("spec.replicas and identity only: plans are the same")
	}
}
