package delivery

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
)

func TestWatches(t *testing.T) {
	deployments := apiresource.Resource{GVR: schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, Namespaced: true}
	pos := func(line, col int) diag.Position { return diag.Position{File: "rule.yaml", Line: line, Col: col} }
	obj := func(ns string, lbls map[string]string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "web", "namespace": ns}, "spec": map[string]any{"replicas": int64(2)}}}
		u.SetLabels(lbls)
		return u
	}
	tests := []struct {
		name  string
		watch rules.Watch
		gr    schema.GroupResource
		obj   *unstructured.Unstructured
		want  []string // Watched, or each reason's text
	}{
		{
			name:  "watched",
			watch: rules.Watch{Namespaces: []string{"team-a"}, LabelSelector: "app=web"},
			obj:   obj("team-a", map[string]string{"app": "web"}),
			want:  []string{"watched"},
		},
		{
			name:  "a misspelt namespace",
			watch: rules.Watch{Namespaces: []string{"teama"}, NamespacesPos: pos(9, 19)},
			obj:   obj("team-a", nil),
			want:  []string{`namespace "team-a" is not in spec.watch[0].namespaces [teama] (rule.yaml:9:19); "teama" looks like a misspelling of it: write "team-a" there`},
		},
		{
			name:  "another namespace",
			watch: rules.Watch{Namespaces: []string{"prod"}, NamespacesPos: pos(9, 19)},
			obj:   obj("team-a", nil),
			want:  []string{`namespace "team-a" is not in spec.watch[0].namespaces [prod] (rule.yaml:9:19); add "team-a" there to watch it`},
		},
		{
			name:  "a label value in another case",
			watch: rules.Watch{LabelSelector: "app=web", LabelSelectorPos: pos(10, 22)},
			obj:   obj("team-a", map[string]string{"app": "Web"}),
			want:  []string{`label selector "app=web" of spec.watch[0].labelSelector (rule.yaml:10:22) does not match the object's labels app=Web: app=web fails; label values are case-sensitive: the object has app=Web, the selector wants app=web; fix the selector or the object's labels`},
		},
		{
			name:  "a field selector",
			watch: rules.Watch{FieldSelector: "spec.replicas=3", FieldSelectorPos: pos(11, 22)},
			obj:   obj("team-a", nil),
			want:  []string{`field selector "spec.replicas=3" of spec.watch[0].fieldSelector (rule.yaml:11:22) does not match the object (spec.replicas=2)`},
		},
		{
			name:  "another resource",
			watch: rules.Watch{},
			gr:    schema.GroupResource{Resource: "configmaps"},
			obj:   obj("team-a", nil),
			want:  []string{`the rule does not watch configmaps: spec.watch (rule.yaml:4:9) lists deployments.apps`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := &rules.Resolved{
				Rule:  &rules.Rule{Name: "r", Pos: pos(4, 9)},
				Watch: []rules.ResolvedWatch{{Watch: tt.watch, Resource: deployments}},
			}
			gr := tt.gr
			if gr.Resource == "" {
				gr = deployments.GVR.GroupResource()
			}
			var got []string
			for _, m := range Watches(res, gr, tt.obj) {
				if m.Watched {
					got = append(got, "watched")
				}
				got = append(got, m.Reasons...)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}
