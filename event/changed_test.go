package event

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestChangedPaths(t *testing.T) {
	base := func() map[string]any { return deployment("default", "web", 2).Object }
	edit := func(f func(m map[string]any)) map[string]any {
		m := base()
		f(m)
		return m
	}
	md := func(m map[string]any) map[string]any { return m["metadata"].(map[string]any) }
	spec := func(m map[string]any) map[string]any { return m["spec"].(map[string]any) }

	tests := []struct {
		name   string
		newObj map[string]any
		ignore []string
		want   []string
	}{
		{"identical", base(), nil, nil},
		{"resourceVersion and managedFields only", edit(func(m map[string]any) {
			md(m)["resourceVersion"] = "43"
			md(m)["managedFields"] = []any{map[string]any{"manager": "kubectl"}}
		}), nil, nil},
		{"spec field", edit(func(m map[string]any) { spec(m)["replicas"] = int64(3) }), nil, []string{"spec.replicas"}},
		{"int64 and float64 of the same value are equal", edit(func(m map[string]any) { spec(m)["replicas"] = float64(2) }), nil, nil},
		{"label added", edit(func(m map[string]any) { md(m)["labels"].(map[string]any)["new"] = "x" }), nil, []string{"metadata.labels.new"}},
		{"dotted key", edit(func(m map[string]any) { md(m)["annotations"].(map[string]any)["a.b/c"] = "changed" }), nil,
			[]string{`metadata.annotations["a.b/c"]`}},
		{"labels removed", edit(func(m map[string]any) { delete(md(m), "labels") }), nil, []string{"metadata.labels"}},
		{"deep change reported at depth 3", edit(func(m map[string]any) {
			spec(m)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)[0].(map[string]any)["image"] = "nginx:1.28"
		}), nil, []string{"spec.template.spec"}},
		{"status and the generation it moved, status ignored", edit(func(m map[string]any) {
			m["status"] = map[string]any{"readyReplicas": int64(3)}
			md(m)["generation"] = int64(9)
		}), []string{"status"}, nil},
		{"status ignored", edit(func(m map[string]any) { m["status"] = map[string]any{"readyReplicas": int64(3)} }), []string{"status"}, nil},
		{"status reported", edit(func(m map[string]any) { m["status"] = map[string]any{"readyReplicas": int64(3)} }), nil, []string{"status.readyReplicas"}},
		{"prefix matches whole segments only", edit(func(m map[string]any) { m["statusX"] = "x" }), []string{"status"}, []string{"statusX"}},
		{"ignored path below the depth limit", edit(func(m map[string]any) {
			spec(m)["template"].(map[string]any)["spec"].(map[string]any)["containers"] = []any{}
		}), []string{"spec.template.spec.containers"}, nil},
		{"ignored path below the depth limit, other change", edit(func(m map[string]any) {
			tpl := spec(m)["template"].(map[string]any)["spec"].(map[string]any)
			tpl["containers"] = []any{}
			tpl["hostNetwork"] = true
		}), []string{"spec.template.spec.containers"}, []string{"spec.template.spec"}},
		{"several, sorted", edit(func(m map[string]any) {
			spec(m)["paused"] = true
			m["data"] = map[string]any{"key": "v"}
			md(m)["labels"].(map[string]any)["app"] = "other"
		}), nil, []string{"data", "metadata.labels.app", "spec.paused"}},
		{"list element changed", edit(func(m map[string]any) { m["items"] = []any{int64(1)} }), nil, []string{"items"}},
		{"type change", edit(func(m map[string]any) { spec(m)["ratio"] = "0.5" }), nil, []string{"spec.ratio"}},
		{"null to value", edit(func(m map[string]any) { m["extra"] = nil }), nil, []string{"extra"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			old := base()
			if got := ChangedPaths(old, tt.newObj, tt.ignore); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ChangedPaths = %q, want %q", got, tt.want)
			}
			if !reflect.DeepEqual(old, base()) {
				t.Error("ChangedPaths modified its argument")
			}
		})
	}
}

// A map that one side lacks compares as empty below an ignored path:
// kreact.once's marker on an object that had no annotations is no change.
func TestChangedPathsMapAddedWithOnlyIgnoredKeys(t *testing.T) {
	marker := `metadata.annotations["once.kreact.dev/r"]`
	bare := map[string]any{"metadata": map[string]any{"name": "a"}}
	marked := map[string]any{"metadata": map[string]any{"name": "a", "annotations": map[string]any{"once.kreact.dev/r": "t"}}}
	both := map[string]any{"metadata": map[string]any{"name": "a", "annotations": map[string]any{"once.kreact.dev/r": "t", "x": "y"}}}
	for _, tt := range []struct {
		name     string
		old, new map[string]any
		want     []string
	}{
		{"marker added", bare, marked, nil},
		{"marker removed", marked, bare, nil},
		{"marker and another annotation added", bare, both, []string{"metadata.annotations.x"}},
	} {
		if got := ChangedPaths(tt.old, tt.new, []string{marker}); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: ChangedPaths = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := ChangedPaths(bare, marked, nil); !reflect.DeepEqual(got, []string{"metadata.annotations"}) {
		t.Errorf("without ignore: ChangedPaths = %q, want [metadata.annotations]", got)
	}
}

func TestJSONEqualLargeIntegers(t *testing.T) {
	if jsonEqual(int64(1<<53+1), int64(1<<53)) {
		t.Error("int64 values beyond 2^53 compared equal")
	}
	if !jsonEqual(map[string]any{"a": []any{int64(1), 2.0}}, map[string]any{"a": []any{1.0, int64(2)}}) {
		t.Error("equal numbers of different types compared unequal")
	}
}

// BenchmarkChangedPaths: an update of a Deployment that changed one
// annotation, as every update call computes it.
func BenchmarkChangedPaths(b *testing.B) {
	oldObj := deployment("default", "web", 2).Object
	newObj := deployment("default", "web", 2).Object
	newObj["metadata"].(map[string]any)["annotations"] = map[string]any{"example.com/replicas": "3"}
	b.ReportAllocs()
	for b.Loop() {
		if len(ChangedPaths(oldObj, newObj, []string{"status"})) != 1 {
			b.Fatal("want one change")
		}
	}
}

// deployment is a Deployment as the informer's cache holds one.
func deployment(ns, name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata": map[string]any{
			"name":            name,
			"namespace":       ns,
			"uid":             "uid-" + name,
			"resourceVersion": "42",
			"generation":      int64(7),
			"labels":          map[string]any{"app": name, "tier": "web"},
			"annotations":     map[string]any{"example.com/replicas": "3", "a.b/c": "dotted"},
		},
		"spec": map[string]any{
			"replicas": replicas,
			"paused":   false,
			"ratio":    0.5,
			"template": map[string]any{
				"spec": map[string]any{
					"containers": []any{
						map[string]any{"name": "app", "image": "nginx:1.27", "args": []any{"-v", nil}},
						map[string]any{"name": "sidecar", "image": "envoy:1.30"},
					},
				},
			},
		},
		"status": map[string]any{"readyReplicas": int64(2)},
	}}
}
