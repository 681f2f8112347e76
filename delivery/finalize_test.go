package delivery

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// resultSink records actions as "verb name origin" and fails those that
// fail says to.
type resultSink struct {
	mu   sync.Mutex
	got  []string
	fail func(a actions.Action) error
}

func (s *resultSink) Execute(_ context.Context, a actions.Action, done func(error)) {
	s.EnqueueResult(a, done)
}

func (s *resultSink) EnqueueResult(a actions.Action, done func(error)) {
	s.mu.Lock()
	what := string(a.Verb) + " " + a.Name
	if strings.HasPrefix(a.Origin.File, "finalizer ") {
		what += " " + string(a.PatchData)
	}
	s.got = append(s.got, what)
	fail := s.fail
	s.mu.Unlock()
	var err error
	if fail != nil {
		err = fail(a)
	}
	done(err)
}

func (s *resultSink) recorded() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.got)
}

// held returns o with the rule's finalizer, and deleted if deleted.
func held(o *unstructured.Unstructured, deleted bool) *unstructured.Unstructured {
	o = o.DeepCopy()
	o.SetFinalizers([]string{"other.example/keep", "kreact.dev/r"})
	if deleted {
		ts := metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		o.SetDeletionTimestamp(&ts)
	}
	return o
}

func TestFinalizer(t *testing.T) {
	fin := func(r *rules.Rule) { r.Finalizer = true }
	const addFin = `patch a [{"op":"test","path":"/metadata/resourceVersion","value":"7"},{"op":"add","path":"/metadata/finalizers","value":["kreact.dev/r"]}]`
	const remove = `patch a [{"op":"test","path":"/metadata/finalizers/1","value":"kreact.dev/r"},{"op":"remove","path":"/metadata/finalizers/1"}]`

	t.Run("a live object gets the finalizer; kreact's own patch calls nothing", func(t *testing.T) {
		sink, rec := &resultSink{}, &recorder{}
		d := newTestDelivery(t, testRule(fin), allHandlers{}, sink, nil)
		a := withRV(cm("a", "1"), "7")
		d.Observe(0, Change{Type: "add", Object: a, Resource: configMaps})
		d.Drain(t.Context(), rec)
		withFin := a.DeepCopy()
		withFin.SetFinalizers([]string{"kreact.dev/r"})
		d.Observe(0, update(a, withFin))
		d.Drain(t.Context(), rec)
		if got := rec.recorded(); !slices.Equal(got, []string{"onAdd(a=1)"}) {
			t.Errorf("calls = %q", got)
		}
		if got := sink.recorded(); !slices.Equal(got, []string{addFin, "patch onAdd"}) {
			t.Errorf("actions = %q", got)
		}
	})

	t.Run("a deleted object gets onDelete, then loses the finalizer; its delete is not delivered again", func(t *testing.T) {
		sink, rec := &resultSink{}, &recorder{}
		d := newTestDelivery(t, testRule(fin), allHandlers{}, sink, nil)
		live, gone := held(cm("a", "1"), false), held(cm("a", "2"), true)
		d.Observe(0, add(live))
		d.Drain(t.Context(), rec)
		d.Observe(0, update(live, gone))
		if n, since := d.Finalizing(); n != 1 || since.IsZero() {
			t.Errorf("Finalizing = %d, %v; want 1 object", n, since)
		}
		d.Drain(t.Context(), rec)
		released := gone.DeepCopy()
		released.SetFinalizers([]string{"other.example/keep"})
		d.Observe(0, update(gone, released))
		d.Observe(0, del(released))
		d.Drain(t.Context(), rec)
		if got, want := rec.recorded(), []string{"onAdd(a=1)", "onDelete(a=2)"}; !slices.Equal(got, want) {
			t.Errorf("calls = %q, want %q", got, want)
		}
		if got, want := sink.recorded(), []string{"patch onAdd", "patch onDelete", remove}; !slices.Equal(got, want) {
			t.Errorf("actions = %q, want %q", got, want)
		}
		if n, _ := d.Finalizing(); n != 0 {
			t.Errorf("Finalizing = %d after the release", n)
		}
	})

	// oneOnDelete deletes a held object, with meanwhile(d, a) called as
	// the sink executes each action a, and wants one onDelete.
	oneOnDelete := func(t *testing.T, meanwhile func(d *Core, a actions.Action)) {
		t.Helper()
		var d *Core
		sink := &resultSink{fail: func(a actions.Action) error { meanwhile(d, a); return nil }}
		rec := &recorder{}
		d = newTestDelivery(t, testRule(fin), allHandlers{}, sink, nil)
		live := held(cm("a", "1"), false)
		d.Observe(0, add(live))
		d.Drain(t.Context(), rec)
		d.Observe(0, update(live, held(cm("a", "2"), true)))
		d.Drain(t.Context(), rec)
		d.Drain(t.Context(), rec)
		if got, want := rec.recorded(), []string{"onAdd(a=1)", "onDelete(a=2)"}; !slices.Equal(got, want) {
			t.Errorf("calls = %q, want %q", got, want)
		}
	}

	t.Run("the DELETED event that comes before the removal's answer owes no second onDelete", func(t *testing.T) {
		// The API server deletes the object as the finalizer goes; the
		// informer may hand over the DELETED event first (issue 37).
		released := cm("a", "3")
		oneOnDelete(t, func(d *Core, a actions.Action) {
			if strings.HasPrefix(a.Origin.File, "finalizer ") && strings.Contains(string(a.PatchData), `"remove"`) {
				d.Observe(0, del(released))
			}
		})
	})

	t.Run("a change of the held object while onDelete runs calls no second onDelete", func(t *testing.T) {
		gone, changed := held(cm("a", "2"), true), held(cm("a", "3"), true)
		oneOnDelete(t, func(d *Core, a actions.Action) {
			if a.Name == "onDelete" {
				d.Observe(0, update(gone, changed)) // while onDelete's action runs
			}
		})
	})

	t.Run("after a restart, an object deleted meanwhile gets onDelete", func(t *testing.T) {
		sink, rec := &resultSink{}, &recorder{}
		d := newTestDelivery(t, testRule(fin), allHandlers{}, sink, nil)
		d.Observe(0, Change{Type: "add", Object: held(cm("a", "1"), true), Initial: true, Resource: configMaps})
		d.Drain(t.Context(), rec)
		if got := rec.recorded(); !slices.Equal(got, []string{"onDelete(a=1)"}) {
			t.Errorf("calls = %q", got)
		}
		if got := sink.recorded(); !slices.Equal(got, []string{"patch onDelete", remove}) {
			t.Errorf("actions = %q", got)
		}
	})

	t.Run("the finalizer stays until onDelete's actions succeed", func(t *testing.T) {
		failures := 2
		sink := &resultSink{fail: func(a actions.Action) error {
			if a.Name == "onDelete" && failures > 0 {
				failures--
				return errors.New("webhook down")
			}
			return nil
		}}
		rec := &recorder{}
		d := newTestDelivery(t, testRule(fin), allHandlers{}, sink, nil)
		d.Observe(0, add(held(cm("a", "1"), true)))
		d.Drain(t.Context(), rec)
		want := []string{"patch onDelete", "patch onDelete", "patch onDelete", remove}
		if got := sink.recorded(); !slices.Equal(got, want) {
			t.Errorf("actions = %q, want %q", got, want)
		}
	})

	t.Run("a rule without onDelete still releases the object", func(t *testing.T) {
		sink, rec := &resultSink{}, &recorder{}
		d := newTestDelivery(t, testRule(fin, func(r *rules.Rule) { r.Events = []event.Type{event.Add} }), allHandlers{}, sink, nil)
		d.Observe(0, add(held(cm("a", "1"), true)))
		d.Drain(t.Context(), rec)
		if got := rec.recorded(); len(got) != 0 {
			t.Errorf("calls = %q, want none", got)
		}
		if got := sink.recorded(); !slices.Equal(got, []string{remove}) {
			t.Errorf("actions = %q", got)
		}
	})

	// refused deletes a held object whose other finalizer goes (the cache
	// then holds released) while the first removal is under way, which
	// the API server refuses; it returns the calls and the actions.
	refused := func(t *testing.T, refusal error, cache mapCache, released *unstructured.Unstructured) ([]string, []string) {
		t.Helper()
		first := true
		sink := &resultSink{fail: func(a actions.Action) error {
			if strings.HasPrefix(a.Origin.File, "finalizer ") && first {
				first = false
				if released != nil {
					cache["a"] = released
				} else {
					delete(cache, "a")
				}
				return refusal
			}
			return nil
		}}
		rec := &recorder{}
		d := New(testRule(fin), allHandlers{}, sink, Options{Logger: quiet(), BaseDelay: -1, Cache: cache})
		t.Cleanup(d.ShutDown)
		gone := withRV(held(cm("a", "2"), true), "8")
		cache["a"] = gone
		d.Observe(0, add(gone))
		d.Drain(t.Context(), rec)
		d.Drain(t.Context(), rec)
		return rec.recorded(), sink.recorded()
	}
	outOfPlace := apierrors.NewInvalid(schema.GroupKind{Kind: "ConfigMap"}, "a", nil)

	t.Run("a removal refused because another finalizer went first is made again from the newer state, without a second onDelete", func(t *testing.T) {
		released := withRV(held(cm("a", "2"), true), "9")
		released.SetFinalizers([]string{"kreact.dev/r"})
		calls, got := refused(t, outOfPlace, mapCache{}, released)
		if want := []string{"onDelete(a=2)"}; !slices.Equal(calls, want) {
			t.Errorf("calls = %q, want %q", calls, want)
		}
		removeFirst := `patch a [{"op":"test","path":"/metadata/finalizers/0","value":"kreact.dev/r"},{"op":"remove","path":"/metadata/finalizers/0"}]`
		if want := []string{"patch onDelete", remove, removeFirst}; !slices.Equal(got, want) {
			t.Errorf("actions = %q, want %q", got, want)
		}
	})

	t.Run("a removal refused because the object went meanwhile is done", func(t *testing.T) {
		calls, got := refused(t, apierrors.NewConflict(schema.GroupResource{Resource: "configmaps"}, "a", nil), mapCache{}, nil)
		if want := []string{"onDelete(a=2)"}; !slices.Equal(calls, want) {
			t.Errorf("calls = %q, want %q", calls, want)
		}
		if want := []string{"patch onDelete", remove}; !slices.Equal(got, want) {
			t.Errorf("actions = %q, want %q", got, want)
		}
	})

	t.Run("an object that leaves the selector gets onDelete and loses the finalizer", func(t *testing.T) {
		sink, rec := &resultSink{}, &recorder{}
		d := newTestDelivery(t, testRule(fin), allHandlers{}, sink, nil)
		live := held(cm("a", "1"), false)
		d.Observe(0, add(live))
		d.Drain(t.Context(), rec)
		d.Observe(0, del(live))
		d.Drain(t.Context(), rec)
		if got, want := rec.recorded(), []string{"onAdd(a=1)", "onDelete(a=1)"}; !slices.Equal(got, want) {
			t.Errorf("calls = %q, want %q", got, want)
		}
		if got, want := sink.recorded(), []string{"patch onAdd", remove, "patch onDelete"}; !slices.Equal(got, want) {
			t.Errorf("actions = %q, want %q", got, want)
		}
	})
}

// Someone taking the finalizer off a live object (kreact finalizers
// release while kreact runs) gets it back, and the log says so and why.
func TestFinalizerRemovedByOthersIsAddedBackAndLogged(t *testing.T) {
	var logs testcluster.LogBuffer
	sink, rec := &resultSink{}, &recorder{}
	d := New(testRule(func(r *rules.Rule) { r.Finalizer = true }), allHandlers{}, sink, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), BaseDelay: -1})
	t.Cleanup(d.ShutDown)
	live := withRV(held(cm("a", "1"), false), "7")
	d.Observe(0, add(live))
	d.Drain(t.Context(), rec)
	if strings.Contains(logs.String(), "finalizer was removed") {
		t.Errorf("an object that has the finalizer logged its removal:\n%s", logs.String())
	}
	released := withRV(live.DeepCopy(), "8")
	released.SetFinalizers([]string{"other.example/keep"})
	d.Observe(0, update(live, released))
	d.Drain(t.Context(), rec)
	if got := sink.recorded(); len(got) == 0 || !strings.Contains(got[len(got)-1], `"op":"add","path":"/metadata/finalizers/-","value":"kreact.dev/r"`) {
		t.Errorf("the finalizer is not added back: actions = %q", got)
	}
	if !strings.Contains(logs.String(), `msg="the rule's finalizer was removed from an object the rule watches; kreact puts it back`) ||
		!strings.Contains(logs.String(), "object=default/a finalizer=kreact.dev/r") {
		t.Errorf("the log does not say the finalizer was put back:\n%s", logs.String())
	}
}
