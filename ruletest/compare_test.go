package ruletest

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
)

func TestMatches(t *testing.T) {
	patch := actions.Action{
		Rule:      "r",
		Verb:      actions.Patch,
		Resource:  schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Namespace: "shop",
		Name:      "web",
		PatchType: types.MergePatchType,
		PatchData: []byte(`{"spec":{"replicas":2}}`),
	}
	event := actions.Action{
		Verb:      actions.Event,
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "pods"},
		Namespace: "shop",
		Name:      "web-0",
		EventType: "Warning",
		Reason:    "Crash",
		Message:   "it crashed",
	}
	web := actions.Action{
		Verb:    actions.HTTP,
		Request: &actions.HTTPRequest{Method: "POST", URL: "http://h/x", Body: []byte(`{"text":"hi","n":1}`)},
	}
	tests := []struct {
		name   string
		exp    Fields
		action actions.Action
		want   bool
	}{
		{"verb, resource and name", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"}}, patch, true},
		{"name left out means empty", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}}, patch, false},
		{"other resource", Fields{{"verb", "patch"}, {"resource", "statefulsets.apps"}, {"name", "web"}}, patch, false},
		{"patch as JSON, numbers by value", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"},
			{"patch", map[string]any{"spec": map[string]any{"replicas": int64(2)}}}}, patch, true},
		{"different patch", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"},
			{"patch", map[string]any{"spec": map[string]any{"replicas": 3.0}}}}, patch, false},
		{"namespace listed", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"}, {"namespace", "other"}}, patch, false},
		{"empty subresource listed", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"}, {"subresource", ""}}, patch, true},
		{"patch type", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"}, {"patchType", "json"}}, patch, false},
		{"rule", Fields{{"verb", "patch"}, {"resource", "deployments.apps"}, {"name", "web"}, {"rule", "r"}}, patch, true},
		{"event fields listed", Fields{{"verb", "event"}, {"resource", "pods"}, {"name", "web-0"}, {"event", Fields{{"reason", "Crash"}}}}, event, true},
		{"event type differs", Fields{{"verb", "event"}, {"resource", "pods"}, {"name", "web-0"}, {"event", Fields{{"type", "Normal"}}}}, event, false},
		{"http body as JSON", Fields{{"verb", "http"}, {"http", Fields{{"body", map[string]any{"n": 1.0, "text": "hi"}}}}}, web, true},
		{"http url", Fields{{"verb", "http"}, {"http", Fields{{"url", "http://h/y"}}}}, web, false},
		{"dry run", Fields{{"verb", "http"}, {"dryRun", true}}, web, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matches(actionSet, tt.exp, ActionFields(tt.action, true), false); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPartialMatches(t *testing.T) {
	apply := actions.Action{
		Verb:      actions.Apply,
		Resource:  schema.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Namespace: "shop",
		Name:      "copy",
		Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "copy", "namespace": "shop", "labels": map[string]any{"a": "1", "b": "2"}},
			"data":     map[string]any{"k": "v", "n": int64(1)},
			"list":     []any{map[string]any{"x": 1, "y": 2}, "s"},
		},
	}
	exp := func(object any) Fields {
		return Fields{{"verb", "apply"}, {"resource", "configmaps"}, {"name", "copy"}, {"object", object}}
	}
	tests := []struct {
		name    string
		object  any
		partial bool
		want    bool
	}{
		{"exact needs every key", map[string]any{"data": map[string]any{"k": "v"}}, false, false},
		{"subset", map[string]any{"data": map[string]any{"k": "v"}, "metadata": map[string]any{"labels": map[string]any{"b": "2"}}}, true, true},
		{"numbers by value", map[string]any{"data": map[string]any{"n": 1.0}}, true, true},
		{"a listed key must be there", map[string]any{"data": map[string]any{"missing": "x"}}, true, false},
		{"a listed value must match", map[string]any{"data": map[string]any{"k": "w"}}, true, false},
		{"null is a value, not a wildcard", map[string]any{"data": map[string]any{"k": nil}}, true, false},
		{"lists element by element", map[string]any{"list": []any{map[string]any{"y": 2}, "s"}}, true, true},
		{"lists as long", map[string]any{"list": []any{map[string]any{"y": 2}}}, true, false},
		{"type differs", map[string]any{"data": "k"}, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := matches(actionSet, exp(normalize(tt.object)), ActionFields(apply, false), tt.partial); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestCompareActions(t *testing.T) {
	cm := func(verb actions.Verb, name string) Fields {
		return ActionFields(actions.Action{Verb: verb, Resource: schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, Name: name,
			PatchType: types.MergePatchType, PatchData: []byte(`{"data":{"k":"v","other":"x"}}`)}, false)
	}
	want := func(verb, name string) ExpectedAction {
		return ExpectedAction{Fields: Fields{{"verb", verb}, {"resource", "configmaps"}, {"name", name}}}
	}
	partialPatch := ExpectedAction{Partial: true, Fields: Fields{{"verb", "patch"}, {"resource", "configmaps"}, {"name", "b"},
		{"patch", map[string]any{"data": map[string]any{"k": "v"}}}}}
	actual := []Fields{cm(actions.Delete, "a"), cm(actions.Patch, "b"), cm(actions.Delete, "c")}
	tests := []struct {
		name         string
		exp          []ExpectedAction
		ignoreOthers bool
		diff         string // "" when they match
	}{
		{"one for one", []ExpectedAction{want("delete", "a"), want("patch", "b"), want("delete", "c")}, false, ""},
		{"one missing", []ExpectedAction{want("patch", "b")}, false,
			"+ - verb: delete\n+   resource: configmaps\n+   name: a\n  - verb: patch\n    resource: configmaps\n    name: b\n+   patchType: merge\n+   patch:\n+     data:\n+       k: v\n+       other: x\n+ - verb: delete\n+   resource: configmaps\n+   name: c\n"},
		{"others ignored", []ExpectedAction{want("patch", "b")}, true, ""},
		{"others ignored, in order", []ExpectedAction{want("delete", "a"), want("delete", "c")}, true, ""},
		{"others ignored, partial patch", []ExpectedAction{partialPatch}, true, ""},
		{"out of order", []ExpectedAction{want("delete", "c"), want("delete", "a")}, true,
			"  - verb: delete\n    resource: configmaps\n-   name: c\n+   name: a\n+ - verb: patch\n+   resource: configmaps\n+   name: b\n  - verb: delete\n    resource: configmaps\n-   name: a\n+   name: c\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := compareActions(tt.exp, actual, tt.ignoreOthers); (diff == "") != (tt.diff == "") || (tt.diff != "" && diff != tt.diff) {
				t.Errorf("diff =\n%s\nwant\n%s", diff, tt.diff)
			}
		})
	}
}
