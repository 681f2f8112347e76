package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// traceLines renders the records of a's trace as "kind event result:
// detail" lines.
func traceLines(t *testing.T, d *Core, name string) []string {
	t.Helper()
	traces := d.Trace(schema.GroupResource{Resource: "configmaps"}, "default", name)
	var out []string
	for _, o := range traces {
		for _, r := range o.Records {
			line := fmt.Sprintf("%s %s %s", r.Kind, r.Event, r.Result)
			if r.Verb != "" {
				line = fmt.Sprintf("%s %s %s", r.Kind, r.Verb, r.Result)
			}
			if r.Detail != "" {
				line += ": " + r.Detail
			}
			out = append(out, line)
		}
	}
	return out
}

func TestTraceRecordsDecisions(t *testing.T) {
	a1, a2, a3 := cm("a", "1"), cm("a", "2"), cm("a", "3")
	annotated := a1.DeepCopy()
	annotated.SetAnnotations(map[string]string{"x": "y"})
	errBoom := errors.New("boom")
	tests := []struct {
		name     string
		rule     func(*rules.Rule)
		handlers Handlers
		fail     error
		changes  []Change
		want     []string
	}{
		{
			name:    "queued, coalesced, called, action",
			changes: []Change{add(a1), update(a1, a2)},
			want: []string{
				"change add queued",
				"change update coalesced: merged into the call that waited",
				"call add ok",
				"action patch ok",
			},
		},
		{
			name: "an update swallowed by ignoreChanges names the path and its position",
			rule: func(r *rules.Rule) {
				r.IgnoreChanges = []rules.FieldPath{{"metadata"}}
				r.IgnoreChangesPos = []diag.Position{{File: "rule.yaml", Line: 9, Col: 19}}
			},
			changes: []Change{update(a1, annotated)},
			want: []string{
				"change update queued",
				"change update ignored: changed only ignored paths: metadata.annotations by spec.ignoreChanges[0] metadata (rule.yaml:9:19); for onUpdate to see such a change, narrow or remove that entry",
			},
		},
		{
			name: "spec.events without update",
			rule: func(r *rules.Rule) {
				r.Events = []event.Type{event.Add}
				r.EventsPos = diag.Position{File: "rule.yaml", Line: 7, Col: 11}
			},
			changes: []Change{update(a1, a2)},
			want:    []string{"change update not handled: spec.events (rule.yaml:7:11) lists add, not update"},
		},
		{
			name:     "a handler the script does not declare",
			handlers: handlerSet{event.Add},
			changes:  []Change{add(a1), update(a1, a2), del(a2)},
			want: []string{
				"change add queued",
				"change update not handled: the script declares no onUpdate",
				"change delete cancelled: the object was deleted before its call; the script never saw it",
			},
		},
		{
			name:    "a call given up shows its error and retries",
			rule:    func(r *rules.Rule) { r.Retries = 1 },
			fail:    errBoom,
			changes: []Change{add(a3)},
			want: []string{
				"change add queued",
				"call add failed; retry 1 of 1 to come: boom",
				"call add given up after 1 retries: boom",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := testRule()
			if tt.rule != nil {
				tt.rule(r)
			}
			h := tt.handlers
			if h == nil {
				h = allHandlers{}
			}
			rec := &recorder{}
			if tt.fail != nil {
				rec.fail = func(event.Event) error { return tt.fail }
			}
			d := New(r, h, rec, Options{Logger: quiet(), BaseDelay: -1, Trace: DefaultTraceSize})
			t.Cleanup(d.ShutDown)
			name := tt.changes[0].Object.GetName()
			for _, c := range tt.changes {
				d.Observe(0, c)
			}
			d.Drain(t.Context(), rec)
			got := traceLines(t, d, name)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("trace:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// The trace is bounded: the object seen first gives its place to a new
// one, and an object keeps its latest records.
func TestTraceIsBounded(t *testing.T) {
	rec := &recorder{}
	d := New(testRule(), allHandlers{}, rec, Options{Logger: quiet(), BaseDelay: -1, Trace: TraceSize{Objects: 2, Records: 3}})
	t.Cleanup(d.ShutDown)
	for _, name := range []string{"a", "b", "c"} {
		d.Observe(0, add(cm(name, "1")))
	}
	for i := 2; i <= 5; i++ {
		d.Observe(0, update(cm("c", fmt.Sprint(i-1)), cm("c", fmt.Sprint(i))))
	}
	if got := traceLines(t, d, "a"); len(got) != 0 {
		t.Errorf("a, the first object, still has records: %q", got)
	}
	if got := traceLines(t, d, "b"); len(got) != 1 {
		t.Errorf("b has %q, want its one record", got)
	}
	want := []string{
		"change update coalesced: merged into the call that waited",
		"change update coalesced: merged into the call that waited",
		"change update coalesced: merged into the call that waited",
	}
	if got := traceLines(t, d, "c"); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("c: %q, want its last 3 records %q", got, want)
	}
	// What waits is told, trace or not.
	traces := d.Trace(schema.GroupResource{Resource: "configmaps"}, "default", "c")
	if len(traces) != 1 || strings.Join(traces[0].Pending, ",") != "onAdd" {
		t.Errorf("pending of c = %+v, want onAdd", traces)
	}
}

// Without Options.Trace, nothing is recorded.
func TestNoTraceByDefault(t *testing.T) {
	rec := &recorder{}
	d := newTestDelivery(t, testRule(), allHandlers{}, rec, nil)
	d.Observe(0, add(cm("a", "1")))
	d.Drain(t.Context(), rec)
	if got := traceLines(t, d, "a"); len(got) != 0 {
		t.Errorf("records without a trace: %q", got)
	}
}

// BenchmarkObserve measures the cost of the trace on the delivery path:
// an add and an update per object, and its call.
func BenchmarkObserve(b *testing.B) {
	for _, size := range []TraceSize{{}, DefaultTraceSize} {
		b.Run(fmt.Sprintf("trace=%dx%d", size.Objects, size.Records), func(b *testing.B) {
			d := New(testRule(), allHandlers{}, discardSink{}, Options{Logger: quiet(), BaseDelay: -1, Trace: size})
			b.Cleanup(d.ShutDown)
			objs := make([][2]Change, 1000)
			for i := range objs {
				o1, o2 := cm(fmt.Sprint("o", i), "1"), cm(fmt.Sprint("o", i), "2")
				objs[i] = [2]Change{add(o1), update(o1, o2)}
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				c := objs[i%len(objs)]
				d.Observe(0, c[0])
				d.Observe(0, c[1])
				d.processNext(b.Context(), benchCaller{}, &worker{}, false)
			}
		})
	}
}

type discardSink struct{}

func (discardSink) EnqueueResult(_ actions.Action, done func(error)) { done(nil) }

func (discardSink) Execute(_ context.Context, _ actions.Action, done func(error)) { done(nil) }

type benchCaller struct{}

func (benchCaller) Invoke(event.Event) (event.Outcome, error) {
	return event.Outcome{}, nil
}

// failingSink is a Sink that fails the actions fail says, and records
// every action.
type failingSink struct {
	recorder
	fail func(actions.Action) error
}

func (s *failingSink) Execute(_ context.Context, a actions.Action, done func(error)) {
	s.EnqueueResult(a, done)
}

func (s *failingSink) EnqueueResult(a actions.Action, done func(error)) {
	s.mu.Lock()
	s.actions = append(s.actions, a)
	s.mu.Unlock()
	var err error
	if s.fail != nil {
		err = s.fail(a)
	}
	done(err)
}

// With spec.recordEvents, a call given up and an action that fails become
// a Warning Event on the object, at most one per object and minute.
func TestRecordEvents(t *testing.T) {
	events := func(s *failingSink) []string {
		s.mu.Lock()
		defer s.mu.Unlock()
		var out []string
		for _, a := range s.actions {
			if a.Verb == actions.Event {
				out = append(out, a.EventType+" "+a.Reason+" "+a.Namespace+"/"+a.Name+": "+a.Message)
			}
		}
		return out
	}
	errBoom := errors.New("boom")
	rec := &recorder{fail: func(ev event.Event) error {
		if ev.Object.GetName() == "bad" {
			return errBoom
		}
		return nil
	}}
	sink := &failingSink{fail: func(a actions.Action) error {
		if a.Verb == actions.Patch {
			return errors.New("forbidden")
		}
		return nil
	}}
	r := testRule(func(r *rules.Rule) { r.Retries = 1; r.RecordEvents = true })
	d := New(r, allHandlers{}, sink, Options{Logger: quiet(), BaseDelay: -1})
	t.Cleanup(d.ShutDown)
	d.Observe(0, add(cm("bad", "1")))
	d.Observe(0, add(cm("good", "1")))
	d.Drain(t.Context(), rec)
	// Changes within the minute: no more Events.
	d.Observe(0, update(cm("bad", "1"), cm("bad", "2")))
	d.Observe(0, update(cm("good", "1"), cm("good", "2")))
	d.Drain(t.Context(), rec)
	want := []string{
		"Warning KreactActionFailed default/good: rule r: patch  onAdd failed: forbidden",
		"Warning KreactHandlerGivenUp default/bad: rule r: onAdd given up after 1 retries: boom",
	}
	got := events(sink)
	slices.Sort(got)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Without spec.recordEvents, none.
	sink = &failingSink{fail: sink.fail}
	d = New(testRule(func(r *rules.Rule) { r.Retries = 1 }), allHandlers{}, sink, Options{Logger: quiet(), BaseDelay: -1})
	t.Cleanup(d.ShutDown)
	d.Observe(0, add(cm("bad", "1")))
	d.Observe(0, add(cm("good", "1")))
	d.Drain(t.Context(), rec)
	if got := events(sink); len(got) != 0 {
		t.Errorf("events without spec.recordEvents: %q", got)
	}
}

// What waits for an object is told: a deleted object's onDelete and the
// finalizer it holds meanwhile, and a timer.
func TestTracePending(t *testing.T) {
	d := New(testRule(func(r *rules.Rule) { r.Finalizer = true }), allHandlers{}, &resultSink{}, Options{Logger: quiet(), BaseDelay: -1, Trace: DefaultTraceSize})
	t.Cleanup(d.ShutDown)
	live, gone := held(cm("a", "1"), false), held(cm("a", "2"), true)
	d.Observe(0, add(live))
	d.Drain(t.Context(), &recorder{})
	d.Observe(0, update(live, gone))
	traces := d.Trace(schema.GroupResource{Resource: "configmaps"}, "default", "a")
	if len(traces) != 1 {
		t.Fatalf("traces = %+v, want one", traces)
	}
	pending := strings.Join(traces[0].Pending, "; ")
	if !strings.Contains(pending, "onDelete, then the finalizer's removal") || !strings.Contains(pending, "holds the finalizer kreact.dev/r until onDelete succeeds") {
		t.Errorf("pending = %q", pending)
	}
	if got := traceLines(t, d, "a"); !slices.Contains(got, "change delete queued: deleted; held by the finalizer kreact.dev/r") {
		t.Errorf("records = %q", got)
	}
}

// Records are in time order. A call is recorded when it is settled, at
// the time it started: a change that arrives meanwhile, such as another
// controller's finalizer leaving an object held by the rule's, happened
// after it and is listed after it.
func TestTraceIsInTimeOrder(t *testing.T) {
	clk := testingclock.NewFakeClock(t0)
	live, gone := held(cm("a", "1"), false), held(cm("a", "2"), true)
	othersGone := gone.DeepCopy()
	othersGone.SetResourceVersion("3")
	othersGone.SetFinalizers([]string{"kreact.dev/r"})
	var d *Core
	rec := &recorder{during: func(ev event.Event) {
		clk.Step(time.Millisecond)
		if ev.Type == event.Delete {
			d.Observe(0, update(gone, othersGone))
		}
	}}
	d = New(testRule(func(r *rules.Rule) { r.Finalizer = true }), allHandlers{}, &resultSink{}, Options{Logger: quiet(), BaseDelay: -1, Clock: clk, Trace: DefaultTraceSize})
	t.Cleanup(d.ShutDown)
	d.Observe(0, add(live))
	d.Drain(t.Context(), rec)
	clk.Step(time.Second)
	d.Observe(0, update(live, gone))
	d.Drain(t.Context(), rec)

	traces := d.Trace(configMaps.GVR.GroupResource(), "default", "a")
	if len(traces) != 1 {
		t.Fatalf("traces = %+v, want 1", traces)
	}
	var lines []string
	for _, r := range traces[0].Records {
		lines = append(lines, fmt.Sprintf("%s %s %s %s", r.At.Sub(t0), r.Kind, r.Event, r.Result))
	}
	if !slices.IsSortedFunc(traces[0].Records, func(a, b Record) int { return a.At.Compare(b.At) }) {
		t.Errorf("records out of time order:\n%s", strings.Join(lines, "\n"))
	}
}
