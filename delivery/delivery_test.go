package delivery

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

var configMaps = apiresource.Resource{
	GVR:        schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
	Kind:       "ConfigMap",
	Namespaced: true,
}

// cm returns ConfigMap ns/name with data.v = v and the given UID.
func cm(name, v string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": "default", "uid": "uid-" + name},
		"data":     map[string]any{"v": v},
	}}
}

func withRV(u *unstructured.Unstructured, rv string) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetResourceVersion(rv)
	return u
}

func add(o *unstructured.Unstructured) Change {
	return Change{Type: event.Add, Object: o, Resource: configMaps}
}
func update(old, o *unstructured.Unstructured) Change {
	return Change{Type: event.Update, Old: old, Object: o, Resource: configMaps}
}
func del(o *unstructured.Unstructured) Change {
	return Change{Type: event.Delete, Object: o, Resource: configMaps}
}

// allHandlers declares every handler.
type allHandlers struct{}

func (allHandlers) HasHandler(event.Type) bool { return true }

// handlerSet declares the listed handlers.
type handlerSet []event.Type

func (h handlerSet) HasHandler(t event.Type) bool { return slices.Contains(h, t) }

// call is what a recording caller saw, as "onUpdate(old->new)[paths]".
func describe(ev event.Event) string {
	v := func(u *unstructured.Unstructured) string {
		s, _, _ := unstructured.NestedString(u.Object, "data", "v")
		return u.GetName() + "=" + s
	}
	switch ev.Type {
	case event.Tick:
		return "onTick"
	case event.Update:
		return fmt.Sprintf("onUpdate(%s->%s)%v", v(ev.OldObject), v(ev.Object), ev.Changed)
	default:
		return fmt.Sprintf("%s(%s)", ev.Type.Handler(), v(ev.Object))
	}
}

// recorder is a Caller that records the calls and can fail them, and a
// Sink that records actions.
type recorder struct {
	mu      sync.Mutex
	calls   []string
	actions []actions.Action
	// fail, if set, makes a call fail when it returns an error.
	fail func(ev event.Event) error
	// during, if set, runs inside each call (to model changes that
	// arrive while a script runs).
	during func(ev event.Event)
}

func (r *recorder) Call(ev event.Event) ([]actions.Action, error) {
	if r.during != nil {
		r.during(ev)
	}
	r.mu.Lock()
	r.calls = append(r.calls, describe(ev))
	fail := r.fail
	r.mu.Unlock()
	if fail != nil {
		if err := fail(ev); err != nil {
			return nil, err
		}
	}
	return []actions.Action{{Verb: actions.Patch, Name: ev.Type.Handler()}}, nil
}

func (r *recorder) EnqueueResult(a actions.Action, done func(error)) {
	r.mu.Lock()
	r.actions = append(r.actions, a)
	r.mu.Unlock()
	done(nil)
}

func (r *recorder) Execute(_ context.Context, a actions.Action, done func(error)) {
	r.EnqueueResult(a, done)
}

func (r *recorder) recorded() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

func testRule(mod ...func(*rules.Rule)) *rules.Rule {
	r := &rules.Rule{
		Name:     "r",
		Events:   rules.AllEvents(),
		Retries:  2,
		Delivery: rules.DeliverLatest,
	}
	for _, m := range mod {
		m(r)
	}
	return r
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newTestDelivery(t *testing.T, r *rules.Rule, h Handlers, sink Sink, obs Observer) *Core {
	t.Helper()
	d := New(r, h, sink, Options{Logger: quiet(), BaseDelay: -1, Observer: obs})
	t.Cleanup(d.ShutDown)
	return d
}

func TestCoalescing(t *testing.T) {
	a1, a2, a3 := cm("a", "1"), cm("a", "2"), cm("a", "3")
	a1b := cm("a", "1b")
	a1b.SetUID("uid-a-second")
	tests := []struct {
		name     string
		rule     func(*rules.Rule)
		handlers Handlers
		changes  []Change
		want     []string
	}{
		{
			name:    "add then updates is one add of the latest state",
			changes: []Change{add(a1), update(a1, a2), update(a2, a3)},
			want:    []string{"onAdd(a=3)"},
		},
		{
			name:    "updates merge into one, from the object the script saw",
			changes: []Change{update(a1, a2), update(a2, a3)},
			want:    []string{"onUpdate(a=1->a=3)[data.v]"},
		},
		{
			name:    "add then delete of an object never seen is nothing",
			changes: []Change{add(a1), update(a1, a2), del(a2)},
			want:    nil,
		},
		{
			name:    "update then delete is the delete of the last known state",
			changes: []Change{update(a1, a2), update(a2, a3), del(a3)},
			want:    []string{"onDelete(a=3)"},
		},
		{
			name:    "delete then add is both, in order",
			changes: []Change{del(a1), add(a1b), update(a1b, a2)},
			want:    []string{"onDelete(a=1)", "onAdd(a=2)"},
		},
		{
			name:    "an update that changes nothing net is not delivered",
			changes: []Change{update(a1, a2), update(a2, a1)},
			want:    nil,
		},
		{
			name:    "an update of ignored paths only is not delivered",
			changes: []Change{update(a1, withRV(a1, "7"))},
			want:    nil,
		},
		{
			name:     "a rule without onUpdate still gets the latest state in onAdd",
			handlers: handlerSet{event.Add},
			changes:  []Change{add(a1), update(a1, a2)},
			want:     []string{"onAdd(a=2)"},
		},
		{
			name:     "a rule without onAdd does not turn adds into updates",
			handlers: handlerSet{event.Update},
			changes:  []Change{add(a1), update(a1, a2)},
			want:     []string{"onUpdate(a=1->a=2)[data.v]"},
		},
		{
			name:    "spec.events without update",
			rule:    func(r *rules.Rule) { r.Events = []event.Type{event.Add, event.Delete} },
			changes: []Change{update(a1, a2), update(a2, a3)},
			want:    nil,
		},
		{
			name:    "delivery every calls for each change",
			rule:    func(r *rules.Rule) { r.Delivery = rules.DeliverEvery },
			changes: []Change{add(a1), update(a1, a2), update(a2, withRV(a2, "9")), update(a2, a3), del(a3)},
			want:    []string{"onAdd(a=1)", "onUpdate(a=1->a=2)[data.v]", "onUpdate(a=2->a=3)[data.v]", "onDelete(a=3)"},
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
			d := newTestDelivery(t, r, h, rec, nil)
			for _, c := range tt.changes {
				d.Observe(0, c)
			}
			d.Drain(t.Context(), rec)
			if got := rec.recorded(); !slices.Equal(got, tt.want) {
				t.Errorf("calls = %q, want %q", got, tt.want)
			}
			if n := d.Len(); n != 0 {
				t.Errorf("%d objects still pending after drain", n)
			}
		})
	}
}

func TestObjectsAreIndependent(t *testing.T) {
	rec := &recorder{}
	d := newTestDelivery(t, testRule(), allHandlers{}, rec, nil)
	d.Observe(0, add(cm("a", "1")))
	d.Observe(0, add(cm("b", "1")))
	d.Observe(0, update(cm("a", "1"), cm("a", "2")))
	// The same object through another informer of the plan is another
	// stream.
	d.Observe(1, add(cm("a", "x")))
	d.Drain(t.Context(), rec)
	want := []string{"onAdd(a=2)", "onAdd(b=1)", "onAdd(a=x)"}
	if got := rec.recorded(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
}

func TestTicksMerge(t *testing.T) {
	rec := &recorder{}
	d := newTestDelivery(t, testRule(func(r *rules.Rule) { r.Every = time.Second }), allHandlers{}, rec, nil)
	for range 3 {
		d.Tick()
	}
	d.Drain(t.Context(), rec)
	if got := rec.recorded(); !slices.Equal(got, []string{"onTick"}) {
		t.Errorf("calls = %q", got)
	}
	// Without spec.every, Tick does nothing.
	d2 := newTestDelivery(t, testRule(), allHandlers{}, rec, nil)
	d2.Tick()
	if d2.Len() != 0 {
		t.Error("a rule without spec.every queued a tick")
	}
}

// Pending work is bounded by the number of objects, not of changes.
func TestPendingIsBoundedByObjects(t *testing.T) {
	rec := &recorder{}
	d := newTestDelivery(t, testRule(), allHandlers{}, rec, nil)
	objs := make([]*unstructured.Unstructured, 10)
	for i := range objs {
		objs[i] = cm(fmt.Sprintf("o%d", i), "0")
	}
	for n := range 10000 {
		i := n % len(objs)
		next := cm(objs[i].GetName(), fmt.Sprint(n))
		d.Observe(0, update(objs[i], next))
		objs[i] = next
	}
	if n := d.Len(); n != 10 {
		t.Errorf("pending objects = %d, want 10", n)
	}
	d.Drain(t.Context(), rec)
	if got := len(rec.recorded()); got != 10 {
		t.Errorf("calls = %d, want 10 (one per object)", got)
	}
}

type counter struct {
	mu      sync.Mutex
	givenUp []string
	dropped int
}

func (c *counter) Event(string, string, event.Type)                     {}
func (c *counter) HandlerCall(string, event.Type, time.Duration, error) {}
func (c *counter) HandlerGivenUp(_ string, _ event.Type, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.givenUp = append(c.givenUp, err.Error())
}
func (c *counter) ChangesDropped(_ string, n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dropped += n
}

func TestFailedCallsAreRetriedThenGivenUp(t *testing.T) {
	errBoom := errors.New("boom")
	rec := &recorder{fail: func(event.Event) error { return errBoom }}
	obs := &counter{}
	d := newTestDelivery(t, testRule(func(r *rules.Rule) { r.Retries = 3 }), allHandlers{}, rec, obs)
	d.Observe(0, add(cm("a", "1")))
	d.Drain(t.Context(), rec)
	if got := len(rec.recorded()); got != 4 {
		t.Errorf("calls = %d, want 1 + 3 retries", got)
	}
	if len(rec.actions) != 0 {
		t.Errorf("failed calls queued %d actions", len(rec.actions))
	}
	if len(obs.givenUp) != 1 || obs.givenUp[0] != "boom" {
		t.Errorf("given up = %q, want one, with its cause", obs.givenUp)
	}
	// The next change of the object starts with a fresh retry budget.
	rec.fail = nil
	d.Observe(0, update(cm("a", "1"), cm("a", "2")))
	d.Drain(t.Context(), rec)
	if got := rec.recorded(); got[len(got)-1] != "onUpdate(a=1->a=2)[data.v]" || len(rec.actions) != 1 {
		t.Errorf("after giving up, calls = %q, actions = %d", got, len(rec.actions))
	}
}

// calls is an Observer that counts handler calls, and Failures that
// records the failed ones.
type calls struct {
	counter
	n      int
	failed []string
}

func (c *calls) HandlerCall(string, event.Type, time.Duration, error) { c.n++ }
func (c *calls) CallFailed(rule string, err error) {
	c.failed = append(c.failed, rule+": "+err.Error())
}

// Failures is told of the failed calls only, once each, and the Observer
// of every call: the control path and the metrics see the same calls.
func TestFailuresAreToldOfFailedCallsOnly(t *testing.T) {
	rec := &recorder{fail: func(ev event.Event) error {
		if ev.Object.GetName() == "bad" {
			return errors.New("boom")
		}
		return nil
	}}
	var seen calls
	d := New(testRule(func(r *rules.Rule) { r.Retries = 0 }), allHandlers{}, rec, Options{Logger: quiet(), BaseDelay: -1, Observer: &seen, Failures: &seen})
	t.Cleanup(d.ShutDown)
	d.Observe(0, add(cm("good", "1")))
	d.Observe(0, add(cm("bad", "1")))
	d.Drain(t.Context(), rec)
	if len(seen.failed) != 1 || seen.failed[0] != "r: boom" {
		t.Errorf("Failures told %q; want the failed call once", seen.failed)
	}
	if seen.n != 2 {
		t.Errorf("the Observer saw %d calls; want 2", seen.n)
	}
}

// A retry sees the latest state: changes that arrived while the failed
// call ran are merged behind it.
func TestRetryOnLatestState(t *testing.T) {
	tests := []struct {
		name     string
		first    Change
		meantime Change
		want     []string
	}{
		{
			name:     "add, updated meanwhile",
			first:    add(cm("a", "1")),
			meantime: update(cm("a", "1"), cm("a", "2")),
			want:     []string{"onAdd(a=1)", "onAdd(a=2)"},
		},
		{
			name:     "update, updated meanwhile",
			first:    update(cm("a", "1"), cm("a", "2")),
			meantime: update(cm("a", "2"), cm("a", "3")),
			want:     []string{"onUpdate(a=1->a=2)[data.v]", "onUpdate(a=1->a=3)[data.v]"},
		},
		{
			name:     "add, deleted meanwhile",
			first:    add(cm("a", "1")),
			meantime: del(cm("a", "1")),
			want:     []string{"onAdd(a=1)"},
		},
		{
			name:     "update, deleted meanwhile",
			first:    update(cm("a", "1"), cm("a", "2")),
			meantime: del(cm("a", "2")),
			want:     []string{"onUpdate(a=1->a=2)[data.v]", "onDelete(a=2)"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d *Core
			first := true
			rec := &recorder{}
			rec.during = func(event.Event) {
				if first {
					d.Observe(0, tt.meantime)
				}
			}
			rec.fail = func(event.Event) error {
				if first {
					first = false
					return errors.New("transient")
				}
				return nil
			}
			d = newTestDelivery(t, testRule(), allHandlers{}, rec, nil)
			d.Observe(0, tt.first)
			d.Drain(t.Context(), rec)
			if got := rec.recorded(); !slices.Equal(got, tt.want) {
				t.Errorf("calls = %q, want %q", got, tt.want)
			}
		})
	}
}

// A handler call is a transaction end to end: a script that throws after
// asking for actions queues none, is retried, and is given up.
func TestThrowAfterActionsQueuesNothing(t *testing.T) {
	src := `function onAdd(obj) {
  for (let i = 0; i < 5; i++) kreact.patch(obj, {metadata: {labels: {n: String(i)}}});
  throw new Error("after five actions");
}`
	prog, err := scripting.Compile("rule.js", src, scripting.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := scripting.NewRuntime(prog, permitAll{}, scripting.RuntimeOptions{Rule: "r"})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	sink := &recorder{}
	obs := &counter{}
	d := newTestDelivery(t, testRule(func(r *rules.Rule) { r.Retries = 2 }), prog, sink, obs)
	d.Observe(0, add(cm("a", "1")))
	d.Drain(t.Context(), rt)
	if len(sink.actions) != 0 {
		t.Errorf("a throwing call queued %d actions, want 0", len(sink.actions))
	}
	if len(obs.givenUp) != 1 || !strings.Contains(obs.givenUp[0], "after five actions") {
		t.Errorf("given up = %q", obs.givenUp)
	}
}

// permitAll is a scripting.Host that permits everything and holds nothing.
type permitAll struct{}

func (permitAll) ResolveResource(string) (apiresource.Resource, error)     { return configMaps, nil }
func (permitAll) ResolveKind(string, string) (apiresource.Resource, error) { return configMaps, nil }
func (permitAll) Get(apiresource.Resource, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}
func (permitAll) List(apiresource.Resource, string, labels.Selector) ([]*unstructured.Unstructured, error) {
	return nil, nil
}
func (permitAll) Permit(actions.Action) error          { return nil }
func (permitAll) Log(slog.Level, string, ...slog.Attr) {}
func (permitAll) Now() time.Time                       { return time.Unix(0, 0) }

func TestEveryQueueIsBounded(t *testing.T) {
	rec := &recorder{}
	obs := &counter{}
	d := newTestDelivery(t, testRule(func(r *rules.Rule) { r.Delivery = rules.DeliverEvery }), allHandlers{}, rec, obs)
	for i := range rules.MaxQueuedChanges + 25 {
		d.Observe(0, add(cm(fmt.Sprintf("o%d", i), "1")))
	}
	if obs.dropped != 25 {
		t.Errorf("dropped = %d, want 25", obs.dropped)
	}
	d.Drain(t.Context(), rec)
	if got := len(rec.recorded()); got != rules.MaxQueuedChanges {
		t.Errorf("calls = %d, want %d", got, rules.MaxQueuedChanges)
	}
	// Room again once drained.
	d.Observe(0, add(cm("late", "1")))
	if d.Len() != 1 {
		t.Error("the drained queue refused a change")
	}
}

// orderChecker is a Caller that checks that no object is in two calls at
// once and that each object's values arrive in increasing order.
type orderChecker struct {
	mu       sync.Mutex
	inflight map[string]bool
	last     map[string]int
	calls    int
	errs     []string
}

func (c *orderChecker) Call(ev event.Event) ([]actions.Action, error) {
	name := ev.Object.GetName()
	s, _, _ := unstructured.NestedString(ev.Object.Object, "data", "v")
	var v int
	fmt.Sscan(s, &v)
	c.mu.Lock()
	if c.inflight[name] {
		c.errs = append(c.errs, name+" is in two calls at once")
	}
	if v <= c.last[name] && c.last[name] != 0 {
		c.errs = append(c.errs, fmt.Sprintf("%s: %d after %d", name, v, c.last[name]))
	}
	c.inflight[name] = true
	c.last[name] = v
	c.calls++
	c.mu.Unlock()
	time.Sleep(100 * time.Microsecond)
	c.mu.Lock()
	c.inflight[name] = false
	c.mu.Unlock()
	return []actions.Action{{Verb: actions.Patch, Name: name, Origin: diag.Position{File: s}}}, nil
}

func TestParallelWorkersKeepPerObjectOrder(t *testing.T) {
	checker := &orderChecker{inflight: map[string]bool{}, last: map[string]int{}}
	sink := &recorder{}
	d := New(testRule(), allHandlers{}, sink, Options{Logger: quiet()})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, []Caller{checker, checker, checker, checker})
	}()
	const objects, updates = 20, 2000
	state := map[string]*unstructured.Unstructured{}
	for i := range objects {
		name := fmt.Sprintf("o%d", i)
		state[name] = cm(name, "0")
	}
	for n := 1; n <= updates; n++ {
		name := fmt.Sprintf("o%d", n%objects)
		next := cm(name, fmt.Sprint(n))
		d.Observe(0, update(state[name], next))
		state[name] = next
	}
	// Every object's final value reaches the script.
	deadline := time.Now().Add(30 * time.Second)
	for {
		checker.mu.Lock()
		final := 0
		for name, o := range state {
			s, _, _ := unstructured.NestedString(o.Object, "data", "v")
			if fmt.Sprint(checker.last[name]) == s {
				final++
			}
		}
		checker.mu.Unlock()
		if final == objects {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d objects reached their final value", final, objects)
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
	if len(checker.errs) > 0 {
		t.Errorf("order violated: %q", checker.errs[:min(5, len(checker.errs))])
	}
	if checker.calls >= updates {
		t.Errorf("%d calls for %d updates: nothing was coalesced", checker.calls, updates)
	}
}

// blocker is a Caller whose calls wait until released.
type blocker struct {
	started chan string
	release chan struct{}
}

func (b *blocker) Call(ev event.Event) ([]actions.Action, error) {
	b.started <- ev.Object.GetName()
	<-b.release
	return nil, nil
}

// Run stops taking work when its context ends: the call under way
// finishes, queued calls are dropped, and Run returns.
func TestRunDropsQueuedCallsOnStop(t *testing.T) {
	b := &blocker{started: make(chan string, 10), release: make(chan struct{})}
	d := New(testRule(), allHandlers{}, &recorder{}, Options{Logger: quiet()})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, []Caller{b})
	}()
	for i := range 100 {
		d.Observe(0, add(cm(fmt.Sprintf("o%d", i), "1")))
	}
	<-b.started
	cancel()
	for !d.stopping.Load() {
		time.Sleep(time.Millisecond)
	}
	close(b.release)
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	if n := len(b.started); n != 0 {
		t.Errorf("%d more calls started after the stop", n)
	}
	if d.Len() != 99 {
		t.Errorf("pending = %d, want the 99 dropped objects", d.Len())
	}
}

// heldSink keeps the actions it is given unfinished until release.
type heldSink struct {
	mu    sync.Mutex
	dones []func()
}

func (s *heldSink) EnqueueResult(_ actions.Action, done func(error)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.dones = append(s.dones, func() { done(nil) })
}

func (s *heldSink) Execute(_ context.Context, a actions.Action, done func(error)) {
	s.EnqueueResult(a, done)
}

func (s *heldSink) release() {
	s.mu.Lock()
	dones := s.dones
	s.dones = nil
	s.mu.Unlock()
	for _, d := range dones {
		d()
	}
}

// An object is not called again until the actions of its previous call
// are finished; the changes that arrive meanwhile are coalesced into the
// next call.
func TestObjectWaitsForItsActions(t *testing.T) {
	sink := &heldSink{}
	rec := &recorder{}
	d := New(testRule(), allHandlers{}, sink, Options{Logger: quiet()})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, []Caller{rec, rec})
	}()
	defer func() {
		cancel()
		sink.release()
		<-done
	}()
	d.Observe(0, add(cm("a", "1")))
	waitFor(t, func() bool { return len(rec.recorded()) == 1 })
	d.Observe(0, update(cm("a", "1"), cm("a", "2")))
	d.Observe(0, update(cm("a", "2"), cm("a", "3")))
	d.Observe(0, add(cm("b", "1")))
	// b is another object: it does not wait for a's actions.
	waitFor(t, func() bool { return slices.Contains(rec.recorded(), "onAdd(b=1)") })
	time.Sleep(50 * time.Millisecond)
	if got := rec.recorded(); slices.ContainsFunc(got, func(s string) bool { return strings.HasPrefix(s, "onUpdate(a") }) {
		t.Fatalf("a was called again before its actions finished: %q", got)
	}
	sink.release()
	waitFor(t, func() bool { return slices.Contains(rec.recorded(), "onUpdate(a=1->a=3)[data.v]") })
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

// mapCache is a Cache over a map of objects by name (source 0).
type mapCache map[string]*unstructured.Unstructured

func (c mapCache) Get(_ int, _, name string) (*unstructured.Unstructured, bool) {
	o, ok := c[name]
	return o, ok
}

func (c mapCache) Newer(_ int, _, name string, uid types.UID, rv string) (*unstructured.Unstructured, bool) {
	o, ok := c[name]
	return o, ok && o.GetUID() == uid && o.GetResourceVersion() != rv
}

// A call gets the newest state the informer's store holds, as a
// controller reading its lister does; the changes up to that state, when
// they are observed, are not delivered again.
func TestCallsSeeTheNewestCachedState(t *testing.T) {
	v1, v2, v3 := withRV(cm("a", "1"), "10"), withRV(cm("a", "2"), "11"), withRV(cm("a", "3"), "12")
	store := mapCache{"a": v3}
	rec := &recorder{}
	d := New(testRule(), allHandlers{}, rec, Options{Logger: quiet(), BaseDelay: -1, Cache: store})
	t.Cleanup(d.ShutDown)
	d.Observe(0, update(v1, v2))
	d.Drain(t.Context(), rec)
	// v3's notifications arrive later: already seen.
	d.Observe(0, update(v2, v3))
	d.Drain(t.Context(), rec)
	v4 := withRV(cm("a", "4"), "13")
	store["a"] = v4
	d.Observe(0, update(v3, v4))
	d.Drain(t.Context(), rec)
	want := []string{"onUpdate(a=1->a=3)[data.v]", "onUpdate(a=3->a=4)[data.v]"}
	if got := rec.recorded(); !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}

	// Another incarnation in the store (deleted and recreated, the delete
	// not observed yet) is not mixed into the old one's update.
	other := withRV(cm("b", "new"), "20")
	other.SetUID("uid-b-second")
	store["b"] = other
	rec2 := &recorder{}
	d2 := New(testRule(), allHandlers{}, rec2, Options{Logger: quiet(), BaseDelay: -1, Cache: store})
	t.Cleanup(d2.ShutDown)
	d2.Observe(0, update(withRV(cm("b", "1"), "5"), withRV(cm("b", "2"), "6")))
	d2.Drain(t.Context(), rec2)
	if got := rec2.recorded(); !slices.Equal(got, []string{"onUpdate(b=1->b=2)[data.v]"}) {
		t.Errorf("calls = %q", got)
	}
}

// handSink records how each action was handed over.
type handSink struct {
	mu  sync.Mutex
	got []string
}

func (s *handSink) EnqueueResult(a actions.Action, done func(error)) {
	s.mu.Lock()
	s.got = append(s.got, "enqueue "+a.Name)
	s.mu.Unlock()
	done(nil)
}

func (s *handSink) Execute(_ context.Context, a actions.Action, done func(error)) {
	s.mu.Lock()
	s.got = append(s.got, "execute "+a.Name)
	s.mu.Unlock()
	done(nil)
}

// threeActions is a Caller whose every call asks for three patches.
type threeActions struct{}

func (threeActions) Invoke(event.Event) (event.Outcome, error) {
	return event.Outcome{Actions: []actions.Action{
		{Verb: actions.Patch, Name: "a"}, {Verb: actions.Patch, Name: "b"}, {Verb: actions.Patch, Name: "c"},
	}}, nil
}

// The worker, which waits for a call's actions, hands the last one over
// with Execute (which may run it on the worker's goroutine), after the
// others, which go to the sink's workers in the order asked.
func TestCommitExecutesTheLastActionOnTheWorker(t *testing.T) {
	sink := &handSink{}
	d := New(testRule(), allHandlers{}, sink, Options{Logger: quiet()})
	t.Cleanup(d.ShutDown)
	d.Observe(0, add(cm("x", "1")))
	d.Drain(t.Context(), threeActions{})
	want := []string{"enqueue a", "enqueue b", "execute c"}
	if !slices.Equal(sink.got, want) {
		t.Errorf("handed over %v, want %v", sink.got, want)
	}
}

// stuckServer is a Server whose first call of object "stuck" never returns
// in time: it is abandoned, as scripting.Runtime.Serve abandons a call
// stuck in built-in code, and returns ErrAbandoned once released.
type stuckServer struct {
	mu      sync.Mutex
	calls   []string
	abandon chan error
	release chan struct{}
}

func (s *stuckServer) Invoke(ev event.Event) (event.Outcome, error) {
	s.mu.Lock()
	name := ev.Object.GetName()
	s.calls = append(s.calls, name)
	first := name == "stuck" && slices.Index(s.calls, "stuck") == len(s.calls)-1
	s.mu.Unlock()
	if first {
		s.abandon <- errors.New("timed out and did not stop")
		<-s.release
		return event.Outcome{}, event.ErrAbandoned
	}
	return event.Outcome{}, nil
}

func (s *stuckServer) Serve(step func() bool, abandoned func(error)) {
	for {
		ended := make(chan struct{})
		var gone atomic.Bool
		go func() {
			for step() {
				if gone.Load() {
					return
				}
			}
			if !gone.Load() {
				close(ended)
			}
		}()
		select {
		case <-ended:
			return
		case err := <-s.abandon:
			gone.Store(true)
			abandoned(err)
		}
	}
}

func (s *stuckServer) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// failedCalls counts the handler calls that failed, as an Observer and as
// Failures.
type failedCalls struct {
	counter
	failed atomic.Int32
	told   atomic.Int32
}

func (c *failedCalls) HandlerCall(_ string, _ event.Type, _ time.Duration, err error) {
	if err != nil {
		c.failed.Add(1)
	}
}

func (c *failedCalls) CallFailed(string, error) { c.told.Add(1) }

// A call that its Server abandons is settled as a failed call, told to the
// Observer and to Failures (which moves misbehaving rules), and retried; the
// Server goes on with the other objects meanwhile, and the stuck call's
// late return settles nothing twice.
func TestAbandonedCallIsSettledAndRetried(t *testing.T) {
	s := &stuckServer{abandon: make(chan error), release: make(chan struct{})}
	obs := &failedCalls{}
	d := New(testRule(func(r *rules.Rule) { r.Retries = 2 }), allHandlers{}, discardSink{}, Options{Logger: quiet(), BaseDelay: time.Millisecond, Observer: obs, Failures: obs})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.Run(ctx, []Caller{s})
	}()
	d.Observe(0, add(cm("stuck", "1")))
	d.Observe(0, add(cm("other", "1")))
	waitFor(t, func() bool {
		got := s.recorded()
		if len(got) > 3 {
			t.Fatalf("calls %v, want 3", got)
		}
		return len(got) == 3
	})
	close(s.release)
	cancel()
	<-done
	if got := s.recorded(); !slices.Equal(got, []string{"stuck", "other", "stuck"}) && !slices.Equal(got, []string{"stuck", "stuck", "other"}) {
		t.Errorf("calls %v, want stuck, its retry and other once", got)
	}
	if n := obs.failed.Load(); n != 1 {
		t.Errorf("%d failed calls observed, want the abandoned one", n)
	}
	if n := obs.told.Load(); n != 1 {
		t.Errorf("Failures told of %d failed calls, want the abandoned one", n)
	}
	if n := d.Len(); n != 0 {
		t.Errorf("%d objects left with changes, want none", n)
	}
}
