package record

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/ruletest"
)

func configMap(name, color, rv string, labels map[string]any) *unstructured.Unstructured {
	md := map[string]any{"name": name, "namespace": "shop", "uid": "u-" + name, "resourceVersion": rv,
		"managedFields": []any{map[string]any{"manager": "kubectl"}}}
	if labels != nil {
		md["labels"] = labels
	}
	return &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": md, "data": map[string]any{"color": color}}}
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func patch(name, body string) actions.Action {
	return actions.Action{Rule: "colors", Verb: actions.Patch, Resource: configMaps, Namespace: "shop", Name: name,
		PatchType: types.MergePatchType, PatchData: []byte(body)}
}

const colorsRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: colors
spec:
  watch:
    - resource: configmaps
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(cm, ctx) {
      kreact.after(cm, "1m");
    }
    function onUpdate(old, cm, ctx) {
      kreact.patch(cm, {metadata: {annotations: {color: cm.data.color}}});
    }
    function onTimer(cm, ctx) {
      kreact.patch(cm, {metadata: {annotations: {reminded: cm.data.color}}});
    }
`

// TestCase turns a recording into a case file, then replays it with
// kreact test's code: the times between changes become advance events
// (the timer falls due in the replay), and the replay passes.
func TestCase(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 123456789, time.UTC)
	r := Recording{
		Rules: []string{"colors.yaml"}, Start: start, End: start.Add(90 * time.Second),
		Changes: []Change{
			{Type: event.Add, Initial: true, Object: Trim(configMap("a", "blue", "1", nil)), At: start.Add(-time.Millisecond)},
			{Type: event.Update, Object: Trim(configMap("a", "green", "2", nil)), At: start.Add(1500 * time.Millisecond)},
			{Type: event.Delete, Object: Trim(configMap("a", "green", "3", nil)), At: start.Add(80 * time.Second)},
		},
		Actions: []ruletest.Fields{
			ruletest.ActionFields(patch("a", `{"metadata":{"annotations":{"color":"green"}}}`), false),
			ruletest.ActionFields(patch("a", `{"metadata":{"annotations":{"reminded":"green"}}}`), false),
		},
	}
	data, err := r.Case()
	if err != nil {
		t.Fatal(err)
	}
	want := `apiVersion: kreact.dev/v1alpha1
kind: RuleTest
metadata:
  name: recorded
spec:
  rules:
    - colors.yaml
  now: "2026-03-01T12:00:00.123Z"
  cases:
    - name: recorded 2026-03-01T12:00:00.123Z
      events:
        - add:
            apiVersion: v1
            data:
              color: blue
            kind: ConfigMap
            metadata:
              name: a
              namespace: shop
              uid: u-a
          initial: true
        - advance: 1.5s
        - update:
            apiVersion: v1
            data:
              color: green
            kind: ConfigMap
            metadata:
              name: a
              namespace: shop
              uid: u-a
        - advance: 1m18.5s
        - delete:
            apiVersion: v1
            data:
              color: green
            kind: ConfigMap
            metadata:
              name: a
              namespace: shop
              uid: u-a
        - advance: 10s
      expect:
        actions:
          - verb: patch
            resource: configmaps
            namespace: shop
            name: a
            patchType: merge
            patch:
              metadata:
                annotations:
                  color: green
          - verb: patch
            resource: configmaps
            namespace: shop
            name: a
            patchType: merge
            patch:
              metadata:
                annotations:
                  reminded: green
`
	if string(data) != want {
		t.Errorf("case file:\n%s\nwant:\n%s", data, want)
	}

	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "colors.yaml"), []byte(colorsRule), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "recorded.yaml")
	if err := os.WriteFile(file, data, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum, err := ruletest.Run(context.Background(), []string{file}, &out, ruletest.Options{})
	if err != nil || sum.Passed != 1 {
		t.Errorf("replay: %v, %+v\n%s", err, sum, out.String())
	}
}

// TestCaseOfNothing is still a valid case: one event is required.
func TestCaseOfNothing(t *testing.T) {
	now := time.Now()
	r := Recording{Rules: []string{"colors.yaml"}, Start: now, End: now}
	data, err := r.Case()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "- advance: 1ms") || !strings.Contains(string(data), "actions: []") {
		t.Errorf("case of nothing:\n%s", data)
	}
}

func TestRelativeTo(t *testing.T) {
	for _, tc := range []struct{ dir, path, want string }{
		{"tests", "rules/a.yaml", "../rules/a.yaml"},
		{".", "rules", "rules"},
		{"a/b", "a/b/c.yaml", "c.yaml"},
	} {
		got, err := RelativeTo(tc.dir, []string{tc.path})
		if err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("RelativeTo(%q, %q) = %q, %v; want %q", tc.dir, tc.path, got, err, tc.want)
		}
	}
}

// The case names its rules and CRDs from its own directory, and on
// stdout from the working directory.
func TestCasePaths(t *testing.T) {
	for _, tc := range []struct{ output, wantRules, wantCRDs string }{
		{"tests/recorded.yaml", "../rules/a.yaml", "../crds/b.yaml"},
		{"", "rules/a.yaml", "crds/b.yaml"},
	} {
		rs, crds, err := CasePaths(tc.output, []string{"rules/a.yaml"}, []string{"crds/b.yaml"})
		if err != nil || len(rs) != 1 || rs[0] != tc.wantRules || len(crds) != 1 || crds[0] != tc.wantCRDs {
			t.Errorf("CasePaths(%q) = %q, %q, %v; want %q, %q", tc.output, rs, crds, err, tc.wantRules, tc.wantCRDs)
		}
	}
}

// TestRecorder feeds the recorder's handler as an informer would.
func TestRecorder(t *testing.T) {
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Second); return clock }
	rs := []*rules.Rule{{Name: "colors"}, {Name: "careful", DryRun: true}}
	r, err := New(rs, Options{Names: []string{"a"}, Now: now})
	if err != nil {
		t.Fatal(err)
	}
	h := r.handler()
	h.OnAdd(configMap("a", "blue", "1", nil), true)
	h.OnAdd(configMap("b", "blue", "1", nil), true) // not a name recorded
	h.OnUpdate(configMap("a", "blue", "1", nil), configMap("a", "blue", "2", nil))
	h.OnAdd(configMap("a", "blue", "3", nil), true) // listed again, same object
	h.OnAdd(configMap("a", "green", "4", nil), true)
	h.OnDelete(cache.DeletedFinalStateUnknown{Key: "shop/a", Obj: configMap("a", "green", "5", nil)})
	// Every action of kreact record's rules is a dry run; the case keeps
	// only those of a rule's own spec.dryRun.
	colors, careful := patch("a", `{}`), patch("a", `{}`)
	colors.DryRun, careful.DryRun, careful.Rule = true, true, "careful"
	r.Asked(colors)
	r.Asked(careful)
	r.HandlerGivenUp("colors", event.Add, fmt.Errorf("call: %w", &event.ScriptError{Rule: "colors", Handler: "onAdd",
		Position: diag.Position{File: "/live/rules/colors.yaml", Line: 12, Col: 3}, Message: "Error: no good"}))

	got := r.Recording()
	var changes []string
	for _, c := range got.Changes {
		s := string(c.Type) + " " + c.Object.GetName() + " " + c.Object.Object["data"].(map[string]any)["color"].(string)
		if c.Initial {
			s += " initial"
		}
		if _, ok := c.Object.Object["metadata"].(map[string]any)["managedFields"]; ok || c.Object.GetResourceVersion() != "" {
			t.Errorf("%s: not trimmed: %v", s, c.Object.Object["metadata"])
		}
		changes = append(changes, s)
	}
	if want := "add a blue initial, update a green, delete a green"; strings.Join(changes, ", ") != want {
		t.Errorf("changes: %s\nwant:    %s", strings.Join(changes, ", "), want)
	}
	// The case names the rule file as spec.rules does, not as record did.
	if want := []string{"Error: no good (rule colors, onAdd)"}; !slices.Equal(got.Errors, want) {
		t.Errorf("errors %q, want %q", got.Errors, want)
	}
	if len(got.Actions) != 2 {
		t.Fatalf("%d actions, want 2", len(got.Actions))
	}
	for i, want := range []struct {
		rule   string
		dryRun bool
	}{{"colors", false}, {"careful", true}} {
		rule, _ := got.Actions[i].Get("rule")
		dryRun, _ := got.Actions[i].Get("dryRun")
		if rule != want.rule || (dryRun == true) != want.dryRun {
			t.Errorf("action %d: rule %v dryRun %v, want %s %v", i, rule, dryRun, want.rule, want.dryRun)
		}
	}
}

// TestScope: the rules see the recorded objects of a recorded resource
// only, and an object that enters or leaves the recording is added or
// deleted for them.
func TestScope(t *testing.T) {
	r, err := New(nil, Options{Namespace: "shop", LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	h := r.filter(apiresource.Resource{GVR: configMaps, Namespaced: true}, cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, _ bool) { seen = append(seen, "add "+obj.(*unstructured.Unstructured).GetName()) },
		UpdateFunc: func(_, obj any) { seen = append(seen, "update "+obj.(*unstructured.Unstructured).GetName()) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj // passed on as the informer gives it
			}
			seen = append(seen, "delete "+obj.(*unstructured.Unstructured).GetName())
		},
	})
	web := map[string]any{"app": "web"}
	other := configMap("x", "blue", "1", web)
	other.SetNamespace("dev")
	h.OnAdd(other, false)
	h.OnAdd(configMap("a", "blue", "1", web), false)
	h.OnAdd(configMap("b", "blue", "1", nil), false)
	h.OnUpdate(configMap("a", "blue", "1", web), configMap("a", "green", "2", web))
	h.OnUpdate(configMap("b", "blue", "1", nil), configMap("b", "blue", "2", web))
	h.OnUpdate(configMap("a", "green", "2", web), configMap("a", "green", "3", nil))
	h.OnDelete(configMap("a", "green", "3", nil))
	h.OnDelete(cache.DeletedFinalStateUnknown{Obj: configMap("b", "blue", "2", web)})
	if got, want := strings.Join(seen, ", "), "add a, update a, add b, delete a, delete b"; got != want {
		t.Errorf("the rules saw: %s\nwant:          %s", got, want)
	}
}

// A case that does not replay is said so with what differs, never
// error=<nil>, and a hint that names the clock: a script that writes
// kreact.now() into an action reads the time of the call live and the
// time recorded for the change offline.
func TestWriteSaysWhatDoesNotReplay(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "stamp.yaml"), []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: colors
spec:
  watch:
    - resource: configmaps
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(cm, ctx) {
      kreact.patch(cm, {metadata: {annotations: {seen: kreact.now().toISOString()}}});
    }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := Recording{
		Rules: []string{"stamp.yaml"}, Start: start, End: start.Add(time.Second),
		Changes: []Change{{Type: event.Add, Object: Trim(configMap("a", "blue", "1", nil)), At: start.Add(100 * time.Millisecond)}},
		// Live, the call came 3ms after the change.
		Actions: []ruletest.Fields{ruletest.ActionFields(patch("a", `{"metadata":{"annotations":{"seen":"2026-03-01T12:00:00.103Z"}}}`), false)},
	}
	var logs, stderr bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	if err := r.Write(t.Context(), filepath.Join(dir, "recorded.yaml"), io.Discard, &stderr, logger); err != nil {
		t.Fatal(err)
	}
	var warning string
	for line := range strings.SplitSeq(logs.String(), "\n") {
		if strings.Contains(line, "level=WARN") {
			warning = line
		}
	}
	for _, want := range []string{`msg="the case does not replay as recorded"`, ": the actions", "kreact.now()", "time of the call"} {
		if !strings.Contains(warning, want) {
			t.Errorf("the warning lacks %q: %s", want, warning)
		}
	}
	if strings.Contains(warning, "<nil>") {
		t.Errorf("the warning says nothing of what differs: %s", warning)
	}
	if !strings.Contains(stderr.String(), "--- FAIL") || !strings.Contains(stderr.String(), "12:00:00.103Z") {
		t.Errorf("stderr lacks kreact test's difference:\n%s", stderr.String())
	}
}
