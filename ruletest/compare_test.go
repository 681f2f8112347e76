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
			if got := matches(tt.exp, ActionFields(tt.action, true)); got != tt.want {
				t.Errorf("matches = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestLineDiff(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{"equal", "a\nb\n", "a\nb\n", "  a\n  b\n"},
		{"changed line", "a\nb\nc\n", "a\nx\nc\n", "  a\n- b\n+ x\n  c\n"},
		{"added", "a\n", "a\nb\n", "  a\n+ b\n"},
		{"removed", "a\nb\n", "b\n", "- a\n  b\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := lineDiff(tt.want, tt.got); got != tt.diff {
				t.Errorf("lineDiff =\n%s\nwant\n%s", got, tt.diff)
			}
		})
	}
}
