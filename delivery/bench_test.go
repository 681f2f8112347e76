package delivery

import (
	"fmt"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
)

// BenchmarkReaction is delivery's part of one reaction of hack/bench's
// rule: an update observed (with an Observer, as kreact run has), its
// call taken, and the one patch the call asks for committed to a sink
// that finishes it on the worker's goroutine, as actions.Queue.Execute
// usually does. Each op is a different object of a thousand, as at a
// steady rate. Its allocations per op, less two of its own (the worker
// and patchCaller's Outcome), are what delivery allocates per event.
func BenchmarkReaction(b *testing.B) {
	d := New(testRule(), allHandlers{}, discardSink{}, Options{Logger: quiet(), BaseDelay: -1, Observer: discardObserver{}})
	b.Cleanup(d.ShutDown)
	changes := make([]Change, 1000)
	for i := range changes {
		name := fmt.Sprint("o", i)
		changes[i] = update(cm(name, "1"), cm(name, "2"))
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		d.Observe(0, changes[i%len(changes)])
		d.processNext(b.Context(), patchCaller{}, &worker{}, false)
		i++
	}
}

// patchCaller asks for one patch of the call's object.
type patchCaller struct{}

func (patchCaller) Invoke(ev event.Event) (event.Outcome, error) {
	return event.Outcome{Actions: []actions.Action{{
		Rule: "r", Verb: actions.Patch, Namespace: ev.Object.GetNamespace(), Name: ev.Object.GetName(),
	}}}, nil
}

type discardObserver struct{}

func (discardObserver) Event(string, string, event.Type)                     {}
func (discardObserver) HandlerCall(string, event.Type, time.Duration, error) {}
func (discardObserver) HandlerGivenUp(string, event.Type, error)             {}
func (discardObserver) ChangesDropped(string, int)                           {}
