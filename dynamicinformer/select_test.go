package dynamicinformer

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// TestSelects checks the label test of a Watch on the cache's compact
// objects against labels.Selector.Matches on the decoded labels, the
// API server's own test, for selectors of every operator.
func TestSelects(t *testing.T) {
	objects := map[string]*unstructured.Unstructured{
		"no labels":   newObj("v1", "ConfigMap", "ns", "a", nil),
		"app=web":     newObj("v1", "ConfigMap", "ns", "b", map[string]string{"app": "web"}),
		"two labels":  newObj("v1", "ConfigMap", "ns", "c", map[string]string{"app": "db", "tier": "back"}),
		"empty value": newObj("v1", "ConfigMap", "ns", "d", map[string]string{"app": ""}),
		"labels after data": {Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"data":     map[string]any{"labels": "not these", "x": []any{int64(1), 2.5, true, nil, map[string]any{"app": "web"}}},
			"metadata": map[string]any{"name": "e", "annotations": map[string]any{"app": "web"}, "labels": map[string]any{"tier": "back"}},
		}},
		"no metadata": {Object: map[string]any{"kind": "ConfigMap"}},
	}
	selectors := []string{"", "app=web", "app!=web", "app", "!app", "app in (web,db)", "app notin (web)", "app=db,tier=back", "tier", "app="}
	for _, s := range selectors {
		sel, err := labels.Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		for name, u := range objects {
			t.Run(name+"/"+s, func(t *testing.T) {
				want := sel.Matches(labels.Set(u.GetLabels()))
				c := compact(u)
				if got := selects(sel, c); got != want {
					t.Errorf("selects(%q, compact) = %v, want %v", s, got, want)
				}
				if got := selects(sel, cache.DeletedFinalStateUnknown{Key: "k", Obj: c}); got != want {
					t.Errorf("selects(%q, tombstone) = %v, want %v", s, got, want)
				}
				if got := selects(sel, u); got != want {
					t.Errorf("selects(%q, decoded) = %v, want %v", s, got, want)
				}
			})
		}
	}
}

// TestCompactLabelsLookup reads each label of a compact object without
// decoding it.
func TestCompactLabelsLookup(t *testing.T) {
	want := map[string]string{"app": "web", "tier": "", "k8s.io/name": "x"}
	l := compact(newObj("v1", "ConfigMap", "ns", "a", want)).labels()
	for k, v := range want {
		if got, ok := l.Lookup(k); !ok || got != v {
			t.Errorf("Lookup(%q) = %q, %v; want %q, true", k, got, ok, v)
		}
		if !l.Has(k) || l.Get(k) != v {
			t.Errorf("Has/Get(%q) = %v/%q", k, l.Has(k), l.Get(k))
		}
	}
	if got, ok := l.Lookup("missing"); ok || got != "" {
		t.Errorf("Lookup(missing) = %q, %v", got, ok)
	}
	if l := compact(newObj("v1", "ConfigMap", "ns", "a", nil)).labels(); l != "" || l.Has("app") {
		t.Errorf("labels of an unlabelled object = %q", string(l))
	}
}
