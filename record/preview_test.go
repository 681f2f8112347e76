package record

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/projection"
	"github.com/kreact/kreact/ruletest"
)

var secretsGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}

func planned(a actions.Action) Planned {
	return Planned{Action: a, Fields: ruletest.ActionFields(a, true)}
}

func TestCompare(t *testing.T) {
	a1 := patch("a", `{"metadata":{"labels":{"seen":"yes"}}}`)
	a2 := patch("a", `{"metadata":{"labels":{"color":"red"}}}`)
	b1 := patch("b", `{"metadata":{"labels":{"seen":"yes"}}}`)
	moved := b1
	moved.Origin = diag.Position{File: "colors.yaml", Line: 30, Col: 5}
	event := actions.Action{Rule: "colors", Verb: actions.Event, Resource: configMaps, Namespace: "shop", Name: "c", EventType: "Normal", Reason: "Seen", Message: "seen"}
	secret := actions.Action{Rule: "colors", Verb: actions.Delete, Resource: secretsGVR, Namespace: "shop", Name: "a"}
	plan := func(errs []string, as ...actions.Action) Plan {
		p := Plan{Errors: errs}
		for _, a := range as {
			p.Actions = append(p.Actions, planned(a))
		}
		return p
	}
	type diff struct {
		target         string
		removed, added int
	}
	for _, c := range []struct {
		name          string
		old, new      Plan
		want          []diff
		gone, newErrs []string
	}{
		{name: "the same, in another order across objects, asked elsewhere in the script",
			old: plan(nil, a1, a2, b1), new: plan(nil, moved, a1, a2)},
		{name: "an action added", old: plan(nil, a1, b1), new: plan(nil, a1, a2, b1),
			want: []diff{{"configmaps shop/a", 0, 1}}},
		{name: "two actions on one object swapped", old: plan(nil, a1, a2), new: plan(nil, a2, a1),
			want: []diff{{"configmaps shop/a", 1, 1}}},
		{name: "objects only one version acts on", old: plan(nil, a1, secret), new: plan(nil, a1, event),
			want: []diff{{"configmaps shop/c", 0, 1}, {"secrets shop/a", 1, 0}}},
		{name: "errors", old: plan([]string{"x", "y"}, a1), new: plan([]string{"y", "z"}, a1),
			gone: []string{"x"}, newErrs: []string{"z"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := Compare(c.old, c.new)
			var diffs []diff
			for _, d := range got.Objects {
				diffs = append(diffs, diff{d.Target.String(), len(d.Removed), len(d.Added)})
			}
			if len(diffs) != len(c.want) || (len(diffs) > 0 && !equalDiffs(diffs, c.want, func(a, b diff) bool { return a == b })) {
				t.Errorf("differences %v, want %v", diffs, c.want)
			}
			if strings.Join(got.ErrorsGone, ",") != strings.Join(c.gone, ",") || strings.Join(got.ErrorsNew, ",") != strings.Join(c.newErrs, ",") {
				t.Errorf("errors gone %q, new %q; want %q, %q", got.ErrorsGone, got.ErrorsNew, c.gone, c.newErrs)
			}
			if same := len(c.want) == 0 && len(c.gone) == 0 && len(c.newErrs) == 0; got.Same() != same {
				t.Errorf("Same() = %v, want %v", got.Same(), same)
			}
		})
	}
}

func equalDiffs[T any](a, b []T, eq func(T, T) bool) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !eq(a[i], b[i]) {
			return false
		}
	}
	return true
}

func TestPlanWriteText(t *testing.T) {
	before := Trim(configMap("a", "blue", "1", nil))
	after := before.DeepCopy()
	after.SetLabels(map[string]string{"seen": "yes"})
	pa := planned(patch("a", `{"metadata":{"labels":{"seen":"yes"}}}`))
	pa.Action.Origin = diag.Position{File: "colors.yaml", Line: 12, Col: 7}
	pa.Before, pa.After = before, after
	refused := planned(actions.Action{Rule: "colors", Verb: actions.Delete, Resource: secretsGVR, Namespace: "shop", Name: "s"})
	refused.Err = `secrets "s" is forbidden`
	event := planned(actions.Action{Rule: "colors", Verb: actions.Event, Resource: configMaps, Namespace: "shop", Name: "a", EventType: "Normal", Reason: "Seen", Message: "seen a"})
	p := Plan{Objects: 3, Actions: []Planned{refused, pa, event}, Errors: []string{"colors.yaml:14:3: boom"}}
	var b bytes.Buffer
	if err := p.Write(&b, ""); err != nil {
		t.Fatal(err)
	}
	want := `configmaps shop/a
  patch (merge)  (rule colors, colors.yaml:12:7)
      @@ -3,6 +3,8 @@
         color: blue
       kind: ConfigMap
       metadata:
      +  labels:
      +    seen: "yes"
         name: a
         namespace: shop
         uid: u-a
  event Normal Seen: seen a  (rule colors)

secrets shop/s
  delete  (rule colors)
      refused by the API server: secrets "s" is forbidden

calls that fail:
  colors.yaml:14:3: boom

3 actions on 2 objects, for 3 objects handed to the rules; nothing was changed
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	if err := p.Write(&b, "json"); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Handed  int
		Objects []struct {
			Name    string
			Actions []struct {
				Action map[string]any
				Origin string
				Error  string
				Diff   string
				After  map[string]any
			}
		}
		Errors []string
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if doc.Handed != 3 || len(doc.Objects) != 2 || len(doc.Objects[0].Actions) != 2 || len(doc.Errors) != 1 {
		t.Fatalf("-o json:\n%s", b.String())
	}
	got := doc.Objects[0].Actions[0]
	if got.Action["verb"] != "patch" || got.Action["rule"] != "colors" || got.Origin != "colors.yaml:12:7" ||
		!strings.Contains(got.Diff, "+    seen: \"yes\"") || got.After["metadata"].(map[string]any)["labels"] == nil {
		t.Errorf("-o json's patch: %+v", got)
	}
	if e := doc.Objects[0].Actions[1].Action["event"].(map[string]any); e["reason"] != "Seen" {
		t.Errorf("-o json's event: %v", e)
	}
	if doc.Objects[1].Actions[0].Error == "" {
		t.Errorf("-o json's refused delete has no error: %s", b.String())
	}

	// -o yaml is the same document.
	jsonDoc := b.String()
	b.Reset()
	if err := p.Write(&b, "yaml"); err != nil {
		t.Fatal(err)
	}
	fromYAML, err := yaml.YAMLToJSON(b.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	var a, y any
	if err := json.Unmarshal([]byte(jsonDoc), &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(fromYAML, &y); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(a, y) {
		t.Errorf("-o yaml:\n%s\nis not -o json:\n%s", b.String(), jsonDoc)
	}
}

func TestComparisonWriteText(t *testing.T) {
	old := Plan{Objects: 2, Actions: []Planned{planned(patch("a", `{"metadata":{"labels":{"seen":"yes"}}}`))}}
	same := Compare(old, old)
	var b bytes.Buffer
	if err := same.Write(&b, ""); err != nil {
		t.Fatal(err)
	}
	if want := "the new version takes the same 1 action as the running one, for 2 objects handed to the rules; nothing was changed\n"; b.String() != want {
		t.Errorf("got %q, want %q", b.String(), want)
	}
	before := Trim(configMap("a", "blue", "1", nil))
	labelled := func(v string) *unstructured.Unstructured {
		after := before.DeepCopy()
		after.SetLabels(map[string]string{"seen": v})
		return after
	}
	old.Actions[0].Before, old.Actions[0].After = before, labelled("yes")
	newer := Plan{Objects: 2, Actions: []Planned{planned(patch("a", `{"metadata":{"labels":{"seen":"no"}}}`))}}
	newer.Actions[0].Before, newer.Actions[0].After = before, labelled("no")
	b.Reset()
	if err := Compare(old, newer).Write(&b, ""); err != nil {
		t.Fatal(err)
	}
	want := `configmaps shop/a
  - patch (merge)  (rule colors)
      @@ -3,6 +3,8 @@
         color: blue
       kind: ConfigMap
       metadata:
      +  labels:
      +    seen: "yes"
         name: a
         namespace: shop
         uid: u-a
  + patch (merge)  (rule colors)
      @@ -3,6 +3,8 @@
         color: blue
       kind: ConfigMap
       metadata:
      +  labels:
      +    seen: "no"
         name: a
         namespace: shop
         uid: u-a

1 object differs: 1 action only by the running version, 1 action only by the new one, for 2 objects handed to the rules; nothing was changed
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
}

// TestCaptureAnswer: each action gets the API server's answer to its own
// dry-run write: by its body, its failed attempts skipped, and a
// condition the write to its path that no other action claims.
func TestCaptureAnswer(t *testing.T) {
	answer := func(name, label string) []byte {
		return []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"` + name + `","labels":{"l":"` + label + `"}}}`)
	}
	path := "/api/v1/namespaces/shop/configmaps/"
	c := &capture{writes: []*dryRunWrite{
		{method: "PATCH", path: path + "a", body: []byte(`{"x":1}`), status: 409, answer: []byte(`{"kind":"Status"}`)},
		{method: "PATCH", path: path + "a", body: []byte(`{"x":2}`), status: 200, answer: answer("a", "two")},
		{method: "PATCH", path: path + "a", body: []byte(`{"x":1}`), status: 200, answer: answer("a", "one")},
		{method: "PATCH", path: path + "a", body: []byte(`{"status":{}}`), status: 200, answer: answer("a", "condition")},
		{method: "POST", path: "/api/v1/namespaces/shop/configmaps", body: []byte(`{"metadata":{"name":"new"}}`), status: 201, answer: answer("new", "created")},
	}}
	label := func(u *unstructured.Unstructured) string {
		if u == nil {
			return "<nil>"
		}
		return u.GetLabels()["l"]
	}
	cond := actions.Action{Verb: actions.SetCondition, Resource: configMaps, Namespace: "shop", Name: "a", Condition: &actions.Condition{Type: "Ready"}}
	create := actions.Action{Verb: actions.Create, Resource: configMaps, Namespace: "shop", Name: "new", Object: map[string]any{"metadata": map[string]any{"name": "new"}}}
	for _, step := range []struct {
		a    actions.Action
		want string
	}{
		{patch("a", `{"x":1}`), "one"},
		{patch("a", `{"x":2}`), "two"},
		{patch("a", `{"x":1}`), "<nil>"}, // its write was taken
		{create, "created"},
		{cond, "condition"},
		{cond, "<nil>"},
	} {
		if got := label(c.answer(step.a)); got != step.want {
			t.Errorf("%s %s: answer %s, want %s", step.a.Verb, step.a.PatchData, got, step.want)
		}
	}
}

// TestScopeAll: kreact preview's -n and -l narrow every resource the
// rules watch; cluster-scoped objects pass -n.
func TestScopeAll(t *testing.T) {
	r, err := New(nil, Options{Namespace: "shop", LabelSelector: "app=web"})
	if err != nil {
		t.Fatal(err)
	}
	w := &handlers{}
	scoped := r.ScopeAll(w)
	var seen []string
	h := cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) { seen = append(seen, obj.(*unstructured.Unstructured).GetName()) }}
	if _, err := scoped.WatchFields(dynamicinformer.Key{GVR: secretsGVR}, "rule", h, projection.Fields{}); err != nil {
		t.Fatal(err)
	}
	web := map[string]any{"app": "web"}
	inShop := configMap("in-shop", "blue", "1", web)
	inDev := configMap("in-dev", "blue", "1", web)
	inDev.SetNamespace("dev")
	unlabelled := configMap("unlabelled", "blue", "1", nil)
	node := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Node", "metadata": map[string]any{"name": "node", "labels": web}}}
	for _, obj := range []*unstructured.Unstructured{inShop, inDev, unlabelled, node} {
		w.h.OnAdd(obj, true)
	}
	if got, want := strings.Join(seen, ","), "in-shop,node"; got != want {
		t.Errorf("the rules saw %s, want %s", got, want)
	}
}

// handlers is a dynamicinformer.Watcher that keeps the handler it is
// given, to call it as an informer would.
type handlers struct {
	dynamicinformer.Watcher
	h cache.ResourceEventHandler
}

func (w *handlers) WatchFields(_ dynamicinformer.Key, _ string, h cache.ResourceEventHandler, _ projection.Fields) (*dynamicinformer.Watch, error) {
	w.h = h
	return nil, nil
}

// TestWriteActionSaysWhyThereIsNoDiff: an action that changes its object
// shows a diff, else says why it shows none.
func TestWriteActionSaysWhyThereIsNoDiff(t *testing.T) {
	cm := Trim(configMap("a", "blue", "1", nil))
	with := func(a actions.Action, before, after *unstructured.Unstructured) Planned {
		pl := planned(a)
		pl.Before, pl.After = before, after
		return pl
	}
	create := actions.Action{Rule: "colors", Verb: actions.Create, Resource: configMaps, Namespace: "shop", Name: "a", Object: cm.Object}
	del := actions.Action{Rule: "colors", Verb: actions.Delete, Resource: configMaps, Namespace: "shop", Name: "a"}
	cond := actions.Action{Rule: "colors", Verb: actions.SetCondition, Resource: configMaps, Namespace: "shop", Name: "a", Condition: &actions.Condition{Type: "Ready", Status: "True", Reason: "Seen"}}
	for _, c := range []struct {
		name string
		pl   Planned
		want string
	}{
		{"a create", with(create, nil, cm), "  create  (rule colors)\n      @@ -0,0 +1,8 @@\n      +apiVersion: v1\n"},
		{"a create of what exists", with(create, cm, nil), "  create  (rule colors)\n      (exists already: the create leaves it as it is)\n"},
		{"a delete", with(del, cm, nil), "  delete  (rule colors)\n      @@ -1,8 +0,0 @@\n      -apiVersion: v1\n"},
		{"a delete of what is gone", with(del, nil, nil), "  delete  (rule colors)\n      (does not exist: nothing to delete)\n"},
		{"a condition that reads so", with(cond, cm, cm), "  condition Ready=True (Seen):   (rule colors)\n      (no change: the object already reads so)\n"},
		{"a patch without an answer", with(patch("a", `{}`), cm, nil), "  patch (merge)  (rule colors)\n      (no answer from the dry run to show)\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b bytes.Buffer
			writeAction(&b, "", c.pl)
			if !strings.HasPrefix(b.String(), c.want) {
				t.Errorf("got:\n%s\nwant it to start with:\n%s", b.String(), c.want)
			}
		})
	}
}

// WritePreview writes one plan, or the comparison of two, as their own
// Write does, and says whether the rules would act (otherwise).
func TestWritePreview(t *testing.T) {
	a := planned(patch("a", `{"metadata":{"labels":{"seen":"yes"}}}`))
	b := planned(patch("b", `{"metadata":{"labels":{"seen":"yes"}}}`))
	for _, c := range []struct {
		name  string
		plans []Plan
		want  bool
	}{
		{name: "nothing to do", plans: []Plan{{Objects: 2}}},
		{name: "an action", plans: []Plan{{Actions: []Planned{a}}}, want: true},
		{name: "a call that fails", plans: []Plan{{Errors: []string{"r.yaml:1:1: boom"}}}, want: true},
		{name: "an edit that acts the same", plans: []Plan{{Actions: []Planned{a}}, {Actions: []Planned{a}}}},
		{name: "an edit that acts otherwise", plans: []Plan{{Actions: []Planned{a}}, {Actions: []Planned{a, b}}}, want: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, format := range []string{"", "json", "yaml"} {
				var got, want bytes.Buffer
				changes, err := WritePreview(&got, c.plans, format)
				if len(c.plans) == 2 {
					_ = Compare(c.plans[0], c.plans[1]).Write(&want, format)
				} else {
					_ = c.plans[0].Write(&want, format)
				}
				if err != nil || changes != c.want || got.String() != want.String() {
					t.Errorf("-o %q: WritePreview = %v, %v, wrote %q; want %v, %q", format, changes, err, got.String(), c.want, want.String())
				}
			}
		})
	}
}
