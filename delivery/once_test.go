package delivery

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// onceSink records the actions it is given with their patches, in order,
// and fails those of the verb fail.
type onceSink struct {
	mu   sync.Mutex
	got  []string
	fail actions.Verb
}

func (s *onceSink) Execute(_ context.Context, a actions.Action, done func(error)) {
	s.EnqueueResult(a, done)
}

func (s *onceSink) EnqueueResult(a actions.Action, done func(error)) {
	s.mu.Lock()
	s.got = append(s.got, string(a.Verb)+" "+a.Name+" "+string(a.PatchData))
	s.mu.Unlock()
	if a.Verb == s.fail {
		done(errors.New("refused"))
		return
	}
	done(nil)
}

func (s *onceSink) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

func onceRuntime(t *testing.T) (*scripting.Program, *scripting.Runtime) {
	t.Helper()
	src := `function onAdd(obj) { welcome(obj); }
function onUpdate(old, obj) { welcome(obj); }
function welcome(obj) {
  if (kreact.once(obj)) kreact.event(obj, {reason: "Welcome"});
}`
	prog, err := scripting.Compile("rule.js", src, scripting.CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := scripting.NewRuntime(prog, permitAll{}, scripting.RuntimeOptions{Rule: "r"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Close)
	return prog, rt
}

func marked(u *unstructured.Unstructured) *unstructured.Unstructured {
	u = u.DeepCopy()
	u.SetAnnotations(map[string]string{event.OnceAnnotation("r"): "2026-01-01T00:00:00Z"})
	return u
}

// kreact.once: the marker goes out after the call's other actions have
// succeeded; the next changes of the object, even before the cache shows
// the marker, do not run the work again; an object that carries the
// marker never does.
func TestOnceMarksAfterTheActions(t *testing.T) {
	prog, rt := onceRuntime(t)
	sink := &onceSink{}
	d := newTestDelivery(t, testRule(), prog, sink, nil)
	a1, a2, a3 := cm("a", "1"), cm("a", "2"), cm("a", "3")
	d.Observe(0, add(a1))
	d.Drain(t.Context(), rt)
	// The cache lags: a change without the marker.
	d.Observe(0, update(a1, a2))
	d.Drain(t.Context(), rt)
	// The marker's own change calls nothing; later ones still do not welcome.
	d.Observe(0, update(a2, marked(a2)))
	d.Observe(0, update(marked(a2), marked(a3)))
	d.Drain(t.Context(), rt)
	// Another object that carries the marker already (a restart).
	d.Observe(0, add(marked(cm("b", "1"))))
	d.Drain(t.Context(), rt)
	want := []string{
		"event a ",
		`patch a {"metadata":{"annotations":{"once.kreact.dev/r":"1970-01-01T00:00:00Z"},"uid":"uid-a"}}`,
	}
	if got := sink.recorded(); !slices.Equal(got, want) {
		t.Errorf("actions\n got %q\nwant %q", got, want)
	}
}

// An action that fails leaves the object unmarked: its next call does
// the work again (at least once).
func TestOnceDoesNotMarkAfterAFailure(t *testing.T) {
	prog, rt := onceRuntime(t)
	sink := &onceSink{fail: actions.Event}
	d := newTestDelivery(t, testRule(func(r *rules.Rule) { r.Retries = 0 }), prog, sink, nil)
	a1, a2 := cm("a", "1"), cm("a", "2")
	d.Observe(0, add(a1))
	d.Drain(t.Context(), rt)
	sink.fail = ""
	d.Observe(0, update(a1, a2))
	d.Drain(t.Context(), rt)
	want := []string{
		"event a ",
		"event a ",
		`patch a {"metadata":{"annotations":{"once.kreact.dev/r":"1970-01-01T00:00:00Z"},"uid":"uid-a"}}`,
	}
	if got := sink.recorded(); !slices.Equal(got, want) {
		t.Errorf("actions\n got %q\nwant %q", got, want)
	}
}

// The actions of a call that asks for kreact.once are traced like any
// call's (the marker is kreact's, not the rule's, and is not).
func TestOnceCallsAreTraced(t *testing.T) {
	prog, rt := onceRuntime(t)
	sink := &onceSink{}
	d := New(testRule(), prog, sink, Options{Logger: quiet(), BaseDelay: -1, Trace: DefaultTraceSize})
	t.Cleanup(d.ShutDown)
	d.Observe(0, add(cm("a", "1")))
	d.Drain(t.Context(), rt)
	var actions []string
	for _, line := range traceLines(t, d, "a") {
		if strings.HasPrefix(line, "action ") {
			actions = append(actions, line)
		}
	}
	if len(actions) != 1 || !strings.HasPrefix(actions[0], "action event ") {
		t.Errorf("traced actions %q; want the call's event", actions)
	}
}
