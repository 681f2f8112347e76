package scripting

import (
	"encoding/json"
	"log/slog"
	"slices"
	"strconv"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

// benchHost resolves Deployments and drops actions, so that the benchmarks
// measure the handler, not the fake.
type benchHost struct{ n int }

func (h *benchHost) ResolveResource(string) (apiresource.Resource, error) { return deployments, nil }
func (h *benchHost) ResolveKind(string, string) (apiresource.Resource, error) {
	return deployments, nil
}
func (h *benchHost) Get(apiresource.Resource, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}
func (h *benchHost) List(apiresource.Resource, string, labels.Selector) ([]*unstructured.Unstructured, error) {
	return nil, nil
}
func (h *benchHost) Permit(actions.Action) error          { h.n++; return nil }
func (h *benchHost) Log(slog.Level, string, ...slog.Attr) {}
func (h *benchHost) Now() time.Time                       { return time.Time{} }

// The handler both benchmarks run: scale a Deployment to the replica count
// its annotation asks for, unless it is paused or already there.
const benchScript = `function onUpdate(oldObj, newObj, ctx) {
  const want = newObj.metadata.annotations["example.com/replicas"];
  if (want === undefined || newObj.spec.paused) return;
  const n = parseInt(want, 10);
  if (newObj.spec.replicas === n && oldObj.spec.replicas === n) return;
  kreact.patch(newObj, {spec: {replicas: n}});
}`

func benchEvent() event.Event {
	oldObj := deployment("default", "web", 2)
	newObj := deployment("default", "web", 2)
	return event.Event{Type: event.Update, OldObject: oldObj, Object: newObj, Changed: []string{"metadata.annotations"}, Resource: deployments}
}

func BenchmarkOnUpdate(b *testing.B) {
	h := &benchHost{}
	r := mustRuntime(b, "rule.js", benchScript, h, RuntimeOptions{Rule: "bench"})
	ev := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := r.Call(ev); err != nil {
			b.Fatal(err)
		}
	}
	if h.n == 0 {
		b.Fatal("no action")
	}
}

// goHandler is benchScript written in Go against the same Host.
func goHandler(h Host, ev event.Event) error {
	want, ok := ev.Object.GetAnnotations()["example.com/replicas"]
	if !ok {
		return nil
	}
	if paused, _, _ := unstructured.NestedBool(ev.Object.Object, "spec", "paused"); paused {
		return nil
	}
	n, err := strconv.ParseInt(want, 10, 64)
	if err != nil {
		return nil
	}
	cur, _, _ := unstructured.NestedInt64(ev.Object.Object, "spec", "replicas")
	old, _, _ := unstructured.NestedInt64(ev.OldObject.Object, "spec", "replicas")
	if cur == n && old == n {
		return nil
	}
	res, err := h.ResolveKind(ev.Object.GetAPIVersion(), ev.Object.GetKind())
	if err != nil {
		return err
	}
	data, err := json.Marshal(map[string]any{"spec": map[string]any{"replicas": n}})
	if err != nil {
		return err
	}
	return h.Permit(actions.Action{
		Rule: "bench", Verb: actions.Patch, Resource: res.GVR, Kind: res.Kind,
		APIVersion: res.GVR.GroupVersion().String(), Namespaced: res.Namespaced,
		Namespace: ev.Object.GetNamespace(), Name: ev.Object.GetName(), UID: ev.Object.GetUID(),
		PatchType: types.MergePatchType, PatchData: data, Origin: diag.Position{File: "rule.go", Line: 1, Col: 1},
	})
}

func BenchmarkGoHandlerBaseline(b *testing.B) {
	h := &benchHost{}
	ev := benchEvent()
	b.ReportAllocs()
	for b.Loop() {
		if err := goHandler(h, ev); err != nil {
			b.Fatal(err)
		}
	}
	if h.n == 0 {
		b.Fatal("no action")
	}
}

// TestBenchmarkHandlersAgree keeps the two benchmarks honest: both must
// queue the same action.
func TestBenchmarkHandlersAgree(t *testing.T) {
	js, native := newFakeHost(), newFakeHost()
	r := mustRuntime(t, "rule.js", benchScript, js, RuntimeOptions{Rule: "bench"})
	if _, err := r.Call(benchEvent()); err != nil {
		t.Fatal(err)
	}
	if err := goHandler(native, benchEvent()); err != nil {
		t.Fatal(err)
	}
	a, g := js.recorded(), native.recorded()
	if len(a) != 1 || len(g) != 1 {
		t.Fatalf("actions: %+v, %+v", a, g)
	}
	a[0].Origin, g[0].Origin = diag.Position{}, diag.Position{}
	if dump(a[0]) != dump(g[0]) {
		t.Errorf("script action:\n%s\nGo action:\n%s", dump(a[0]), dump(g[0]))
	}
}

// BenchmarkScriptVersusGo calls both handlers above on the same event,
// alternately, and reports the script's time as a multiple of the plain Go
// handler's: the ratio docs/performance.md quotes, measured in one run.
// script/go divides the sums of the calls' times. median-script/go
// divides their medians, which a call preempted by another process
// moves less on a shared machine, but which leaves out the slow calls
// that the collector makes (the script's allocations cost that too).
func BenchmarkScriptVersusGo(b *testing.B) {
	h := &benchHost{}
	r := mustRuntime(b, "rule.js", benchScript, h, RuntimeOptions{Rule: "bench"})
	ev := benchEvent()
	var script, native time.Duration
	scripts, natives := make([]time.Duration, 0, b.N), make([]time.Duration, 0, b.N)
	n := 0
	b.ResetTimer()
	// The calls are made as kreact's delivery makes them: in a loop on
	// the runtime's own goroutine (Serve).
	r.Serve(func() bool {
		if n == b.N {
			return false
		}
		n++
		start := time.Now()
		if _, err := r.Call(ev); err != nil {
			b.Error(err)
			return false
		}
		mid := time.Now()
		if err := goHandler(h, ev); err != nil {
			b.Error(err)
			return false
		}
		end := time.Now()
		script += mid.Sub(start)
		native += end.Sub(mid)
		scripts, natives = append(scripts, mid.Sub(start)), append(natives, end.Sub(mid))
		return true
	}, func(err error) { b.Error(err) })
	b.StopTimer()
	b.ReportMetric(float64(script)/float64(native), "script/go")
	if len(scripts) > 0 {
		slices.Sort(scripts)
		slices.Sort(natives)
		b.ReportMetric(float64(scripts[len(scripts)/2])/float64(natives[len(natives)/2]), "median-script/go")
	}
}
