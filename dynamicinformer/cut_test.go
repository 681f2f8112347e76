package dynamicinformer

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kreact/kreact/internal/testjson"
	"github.com/kreact/kreact/projection"
)

// cutMatches checks that cut makes of the compact form of obj what shape
// makes of obj decoded: the same data and identity.
func cutMatches(t *testing.T, obj map[string]any, fields projection.Fields) {
	t.Helper()
	whole := shape(projection.Fields{})(&unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}).(*compactObject)
	got := cut(whole, fields.Kept())
	want := shape(fields)(&unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}).(*compactObject)
	if g, w := got.decode().Object, want.decode().Object; !reflect.DeepEqual(g, w) {
		t.Fatalf("%.300v cut to %s:\n got %#v\nwant %#v", obj, fields, g, w)
	}
	if got.GetNamespace() != want.GetNamespace() || got.GetName() != want.GetName() || got.GetUID() != want.GetUID() || got.GetResourceVersion() != want.GetResourceVersion() {
		t.Fatalf("%.300v cut to %s: identity %q %q %q %q, want %q %q %q %q", obj, fields, got.GetNamespace(), got.GetName(), got.GetUID(), got.GetResourceVersion(),
			want.GetNamespace(), want.GetName(), want.GetUID(), want.GetResourceVersion())
	}
}

func TestCutMatchesShape(t *testing.T) {
	obj := map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{
			"name": "web", "namespace": "shop", "uid": "u-1", "resourceVersion": "42", "generation": int64(3),
			"labels": map[string]any{"app": "web"}, "annotations": map[string]any{"a": "b"},
			"managedFields": []any{map[string]any{"manager": "kubectl"}}, "creationTimestamp": "2026-11-26T00:00:00Z",
		},
		"spec":   map[string]any{"replicas": int64(2), "paused": false, "template": map[string]any{"spec": map[string]any{"containers": []any{"c"}}}},
		"status": map[string]any{"replicas": int64(2), "conditions": []any{map[string]any{"type": "Available"}}},
	}
	many := map[string]any{}
	for i := range 200 { // a count over 127 takes two bytes
		many[fmt.Sprint("k", i)] = int64(i)
	}
	big := runtime.DeepCopyJSON(obj)
	big["spec"].(map[string]any)["many"] = many
	big["metadata"].(map[string]any)["many"] = many
	for _, fields := range []projection.Fields{
		projection.New(),
		projection.New(projection.Path{"spec", "replicas"}, projection.Path{"status", "conditions"}),
		projection.New(projection.Path{"spec"}),
		projection.New(projection.Path{"metadata"}),
		projection.New(projection.Path{"metadata", "generation"}),
		// The way to a path that ends early is kept: spec.template {}.
		projection.New(projection.Path{"spec", "template", "metadata", "labels"}),
		// A path through a list or a scalar keeps nothing of it.
		projection.New(projection.Path{"spec", "paused", "x"}, projection.Path{"status", "conditions", "type"}),
		projection.New(projection.Path{"missing"}),
		projection.New(projection.Path{"spec", "many"}),
	} {
		cutMatches(t, obj, fields)
		cutMatches(t, big, fields)
	}
	// Metadata that is not a map: only a whole-metadata projection keeps it.
	odd := map[string]any{"kind": "X", "metadata": "m", "spec": int64(1)}
	cutMatches(t, odd, projection.New(projection.Path{"spec"}))
	cutMatches(t, odd, projection.New(projection.Path{"metadata"}))
}

// TestCutRandom compares cut with shape on random objects, each cut to
// projections of random paths through it.
func TestCutRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	// path walks obj from the top through random keys, sometimes one it
	// does not have.
	path := func(obj map[string]any) projection.Path {
		var p projection.Path
		var v any = obj
		for len(p) < 4 {
			m, ok := v.(map[string]any)
			if !ok || len(m) == 0 || rng.IntN(4) == 0 {
				if rng.IntN(3) == 0 {
					p = append(p, "absent")
				}
				break
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			k := keys[rng.IntN(len(keys))]
			p, v = append(p, k), m[k]
		}
		return p
	}
	for i := 0; i < 2000; i++ {
		obj := map[string]any{
			"kind": "X", "apiVersion": "v1", "spec": testjson.Random(rng), "status": testjson.Random(rng),
			"metadata": map[string]any{
				"name": fmt.Sprint("n", i), "namespace": testjson.Random(rng), "uid": testjson.Random(rng),
				"resourceVersion": fmt.Sprint(i), "labels": testjson.Random(rng), "generation": testjson.Random(rng),
				"annotations":   map[string]any{LastAppliedAnnotation: "x", "a": testjson.Random(rng)},
				"managedFields": testjson.Random(rng),
			},
		}
		if _, err := json.Marshal(obj); err != nil {
			continue // NaN, which DeepEqual cannot compare
		}
		var paths []projection.Path
		for range rng.IntN(4) {
			paths = append(paths, path(obj))
		}
		cutMatches(t, obj, projection.New(paths...))
	}
}

func BenchmarkProject(b *testing.B) {
	obj := map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "ns", "uid": "u", "resourceVersion": "1",
			"labels": map[string]any{"app": "web"}, "creationTimestamp": "2026-11-26T00:00:00Z"},
		"data": map[string]any{"seq": "1", "payload": string(make([]byte, 1024))},
	}
	whole := compact(&unstructured.Unstructured{Object: obj})
	fields := projection.New(projection.Path{"data", "seq"}, projection.Path{"metadata", "generation"})
	for _, bc := range []struct {
		name string
		f    func(*compactObject) any
	}{
		{"cut", func(o *compactObject) any { return cut(o, fields.Kept()) }},
		{"decode-apply-compact", func(o *compactObject) any { return shape(fields)(o.decode()) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				bc.f(whole)
			}
		})
	}
}

// A corrupt compact object (only a bug can make one) panics with the
// object's name, as decode does.
func TestCutPanicsOnCorruptData(t *testing.T) {
	whole := compact(&unstructured.Unstructured{Object: map[string]any{"kind": "X", "metadata": map[string]any{"name": "n"}}})
	for _, data := range []string{"", "x", whole.data[:len(whole.data)-1], "m\x01\x08kind", "m\x01\x7f"} {
		func() {
			defer func() {
				if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "corrupt compact object") {
					t.Errorf("%q: recovered %v, want a panic about a corrupt object", data, r)
				}
			}()
			cut(&compactObject{data: data}, projection.New().Kept())
		}()
	}
}
