package metrics_test

import (
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/metrics"
)

// BenchmarkRecorderPerReaction is what the Recorder does for one
// reaction of the benchmark's rule (hack/bench): the change counted, the
// handler call counted and timed, and the patch's success counted. Its
// allocations per op are paid on every event at any rate.
func BenchmarkRecorderPerReaction(b *testing.B) {
	rec := metrics.New()
	patch := actions.Result{Action: actions.Action{Rule: "bench", Verb: actions.Patch}, Outcome: actions.Succeeded}
	b.ReportAllocs()
	for b.Loop() {
		rec.Event("bench", "configmaps", event.Update)
		rec.HandlerCall("bench", event.Update, 80*time.Microsecond, nil)
		rec.ActionResult(patch)
	}
}
