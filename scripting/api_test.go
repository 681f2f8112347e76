package scripting

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
)

func TestJSONValidation(t *testing.T) {
	tests := []struct {
		call string
		want string // the exception message
	}{
		{`kreact.patch(obj, {spec: {replicas: NaN}})`, `TypeError: patch: spec.replicas is NaN`},
		{`kreact.setCondition(obj, {status: "True"})`, `TypeError: setCondition: condition type is required`},
		{`kreact.setCondition(obj, {type: "Ready", status: "yes"})`, `TypeError: setCondition: condition status must be "True", "False" or "Unknown", not "yes"`},
		{`kreact.setCondition(obj, {type: "Ready", status: true})`, `TypeError: setCondition: condition.status must be a string`},
		{`kreact.setCondition(obj, {type: "Ready", status: "True", observedGeneration: 1.5})`, `TypeError: setCondition: condition.observedGeneration must be an integer`},
		{`kreact.setCondition(obj, "Ready")`, `TypeError: setCondition: want setCondition(target, {type, status, reason, message, observedGeneration})`},
		{`kreact.patch(obj, {spec: {replicas: 1 / 0}})`, `TypeError: patch: spec.replicas is +Inf`},
		{`kreact.patch(obj, {spec: {replicas: -1 / 0}})`, `TypeError: patch: spec.replicas is -Inf`},
		{`kreact.patch(obj, {spec: {fn() {}}})`, `TypeError: patch: spec.fn is a function`},
		{`kreact.patch(obj, {spec: {x: undefined}})`, `TypeError: patch: spec.x is undefined`},
		{`kreact.patch(obj, {spec: {list: [1, undefined]}})`, `TypeError: patch: spec.list[1] is undefined`},
		{`kreact.patch(obj, {spec: {list: [1, , 3]}})`, `TypeError: patch: spec.list[1] is undefined`},
		{`kreact.patch(obj, {spec: {s: Symbol("x")}})`, `TypeError: patch: spec.s is a symbol`},
		{`kreact.patch(obj, {spec: {big: 10n}})`, `TypeError: patch: spec.big is a BigInt`},
		{`kreact.patch(obj, {spec: {m: new Map()}})`, `TypeError: patch: spec.m is a Map, not JSON data`},
		{`kreact.patch(obj, {metadata: {annotations: {"a.b/c": NaN}}})`, `TypeError: patch: metadata.annotations["a.b/c"] is NaN`},
		{`kreact.patch(obj, (() => { const o = {a: {}}; o.a.self = o; return o; })())`, `TypeError: patch: a.self is a circular reference`},
		{`kreact.patch(obj, (() => { let o = {}; for (let i = 0; i < 200; i++) o = {n: o}; return o; })())`, `TypeError: patch: ` + strings.Repeat("n.", 99) + `n is nested more than 100 levels deep`},
		{`kreact.patch(obj, {data: "x".repeat(4 << 20)})`, `TypeError: patch: data is too large (more than 3145728 bytes)`},
		{`kreact.patch(obj, [1])`, `TypeError: patch: the patch must be an object`},
		{`kreact.patch(obj)`, `TypeError: patch: patch is undefined`},
		{`kreact.patch(obj, {spec: {d: new Date(NaN)}})`, `TypeError: patch: spec.d is an invalid Date`},
		{`kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x", namespace: "default"}, data: {f: () => 1}})`, `TypeError: apply: data.f is a function`},
		{`kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {generateName: "x-"}})`, `TypeError: create: metadata.namespace is required for configmaps`},
		{`kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {generateName: "x-", namespace: "default"}})`, `TypeError: apply: the object needs metadata.name`},
		{`kreact.apply({kind: "ConfigMap", metadata: {name: "x"}})`, `TypeError: apply: the object needs apiVersion and kind`},
		{`kreact.apply({apiVersion: "v1", kind: "Nope", metadata: {name: "x"}})`, `Error: apply: resolve v1 Nope: no matches for kind "Nope" in version "v1"`},
		{`kreact.jsonPatch(obj, [{op: "boom", path: "/x"}])`, `TypeError: jsonPatch: ops[0].op must be one of add, remove, replace, move, copy, test`},
		{`kreact.jsonPatch(obj, [{op: "add", path: "x", value: 1}])`, `TypeError: jsonPatch: ops[0].path must be a JSON pointer ("" or "/...")`},
		{`kreact.jsonPatch(obj, [{op: "replace", path: "/x"}])`, `TypeError: jsonPatch: ops[0] (replace) needs a value`},
		{`kreact.jsonPatch(obj, [{op: "move", path: "/x"}])`, `TypeError: jsonPatch: ops[0].from must be a JSON pointer ("" or "/...")`},
		{`kreact.jsonPatch(obj, [])`, `TypeError: jsonPatch: ops must be a non-empty array of operations`},
		{`kreact.delete({resource: "deploy", name: "x"})`, `TypeError: delete: a namespace is required for deployments.apps`},
		{`kreact.delete({resource: "deploy", namespace: "default"})`, `TypeError: delete: target has no name`},
		{`kreact.delete({resource: "nope", namespace: "default", name: "x"})`, `Error: delete: resolve "nope": the server doesn't have a resource type "nope"`},
		{`kreact.delete({kind: "Deployment", name: "x"})`, `TypeError: delete: target needs apiVersion and kind, or resource`},
		{`kreact.delete({resource: 7, name: "x"})`, `TypeError: delete: target resource must be a string`},
		{`kreact.delete("web")`, `TypeError: delete: target must be an object or a reference like {resource, namespace, name}`},
		{`kreact.patch(obj, {}, {subresource: "log"})`, `TypeError: patch: options.subresource must be "status" or "scale", not "log"`},
		{`kreact.patch(obj, {}, "status")`, `TypeError: patch: options must be an object like {subresource: "status"}`},
		{`kreact.event(obj, {type: "Info", reason: "R"})`, `TypeError: event: type must be "Normal" or "Warning", not "Info"`},
		{`kreact.event(obj, {message: "m"})`, `TypeError: event: reason is required`},
		{`kreact.http({url: "file:///etc/passwd"})`, `TypeError: http: url must be an absolute http or https URL, not "file:///etc/passwd"`},
		{`kreact.http({url: "https://example.com", method: "GE T"})`, `TypeError: http: invalid method "GE T"`},
		{`kreact.http({url: "https://example.com", headers: {"X-A": "a\nb"}})`, `TypeError: http: header "X-A" must be a valid name with a single-line string value`},
		{`kreact.http({url: "https://example.com", body: {n: NaN}})`, `TypeError: http: body.n is NaN`},
		{`kreact.hash({f: function () {}})`, `TypeError: hash: f is a function`},
		{`kreact.clone({n: NaN})`, `TypeError: clone: n is NaN`},
		{`kreact.list("deploy", {labelSelector: "a in (b"})`, `TypeError: list: labelSelector: unable to parse requirement: found '', expected: ',' or ')'`},
		{`kreact.get("deploy", "default")`, `TypeError: get: want get(resource, namespace, name) with strings`},
		{`kreact.log("x", {f: NaN})`, `TypeError: log: f is NaN`},
	}
	for _, tt := range tests {
		t.Run(tt.call, func(t *testing.T) {
			h := newFakeHost()
			src := "function onAdd(obj) {\n  const x = 1;\n  " + tt.call + ";\n}"
			// A generous timeout: these calls check messages, and
			// building 4 MiB under the race detector on a loaded machine
			// took over the default second.
			r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Timeout: 30 * time.Second})
			_, err := r.Call(addEvent)
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Call = %v, want a ScriptError", err)
			}
			if se.Message != tt.want {
				t.Errorf("message = %s\nwant      %s", se.Message, tt.want)
			}
			// The error points at the script line that made the call.
			if !strings.HasPrefix(se.Position.String(), "rule.js:3:") {
				t.Errorf("Position = %s, want line 3", se.Position.String())
			}
			if a := h.recorded(); len(a) != 0 {
				t.Errorf("actions queued: %+v", a)
			}
		})
	}
}

func TestActions(t *testing.T) {
	web := addEvent.Object
	base := func(verb actions.Verb) actions.Action {
		return actions.Action{
			Rule: "test-rule", Verb: verb, Resource: deployments.GVR, Kind: "Deployment", APIVersion: "apps/v1",
			Namespaced: true, Namespace: "default", Name: "web",
		}
	}
	with := func(a actions.Action, f func(*actions.Action)) actions.Action { f(&a); return a }
	cm := func(a *actions.Action) {
		a.Resource, a.Kind, a.APIVersion, a.Name = configMaps.GVR, "ConfigMap", "v1", "web-config"
	}
	tests := []struct {
		name string
		call string
		want actions.Action
	}{
		{
			name: "patch the event object",
			call: `kreact.patch(obj, {spec: {replicas: obj.spec.replicas * 2}, metadata: {annotations: {"a.b/c": null}}})`,
			want: with(base(actions.Patch), func(a *actions.Action) {
				a.UID = "uid-web"
				a.PatchType = types.MergePatchType
				a.PatchData = []byte(`{"metadata":{"annotations":{"a.b/c":null}},"spec":{"replicas":4}}`)
			}),
		},
		{
			name: "patch by resource reference",
			call: `kreact.patch({resource: "cm", namespace: "default", name: "web-config"}, {data: {k: "v"}})`,
			want: with(base(actions.Patch), func(a *actions.Action) {
				cm(a)
				a.PatchType = types.MergePatchType
				a.PatchData = []byte(`{"data":{"k":"v"}}`)
			}),
		},
		{
			name: "json patch by kind reference",
			call: `kreact.jsonPatch({apiVersion: "apps/v1", kind: "Deployment", namespace: "default", name: "web"}, [
    {op: "test", path: "/spec/replicas", value: 2},
    {op: "replace", path: "/spec/replicas", value: 3},
    {op: "copy", from: "/a", path: "/b"},
    {op: "remove", path: "/metadata/labels/tier"}])`,
			want: with(base(actions.Patch), func(a *actions.Action) {
				a.PatchType = types.JSONPatchType
				a.PatchData = []byte(`[{"op":"test","path":"/spec/replicas","value":2},{"op":"replace","path":"/spec/replicas","value":3},{"from":"/a","op":"copy","path":"/b"},{"op":"remove","path":"/metadata/labels/tier"}]`)
			}),
		},
		{
			name: "create with generateName",
			call: `kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {generateName: "web-", namespace: obj.metadata.namespace}, data: {n: 1.5, i: 2.0}})`,
			want: with(base(actions.Create), func(a *actions.Action) {
				cm(a)
				a.Name = ""
				a.Object = map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"generateName": "web-", "namespace": "default"},
					"data":     map[string]any{"n": 1.5, "i": int64(2)},
				}
			}),
		},
		{
			name: "apply drops managedFields",
			call: `kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "web-config", namespace: "default", managedFields: [{}]}, data: {hash: kreact.hash(obj.spec)}})`,
			want: with(base(actions.Apply), func(a *actions.Action) {
				cm(a)
				a.Object = map[string]any{
					"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": "web-config", "namespace": "default"},
					"data":     map[string]any{"hash": hashOf(t, web.Object["spec"])},
				}
			}),
		},
		{
			name: "apply a cluster-scoped object",
			call: `kreact.apply({apiVersion: "v1", kind: "Namespace", metadata: {name: "team-a", namespace: "ignored"}})`,
			want: actions.Action{
				Rule: "test-rule", Verb: actions.Apply, Resource: namespaces.GVR, Kind: "Namespace", APIVersion: "v1", Name: "team-a",
				Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": "team-a", "namespace": "ignored"}},
			},
		},
		{
			name: "patch the status subresource",
			call: `kreact.patch(obj, {status: {seen: true}}, {subresource: "status"})`,
			want: with(base(actions.Patch), func(a *actions.Action) {
				a.UID = "uid-web"
				a.Subresource = "status"
				a.PatchType = types.MergePatchType
				a.PatchData = []byte(`{"status":{"seen":true}}`)
			}),
		},
		{
			name: "json patch the scale subresource",
			call: `kreact.jsonPatch(obj, [{op: "replace", path: "/spec/replicas", value: 0}], {subresource: "scale"})`,
			want: with(base(actions.Patch), func(a *actions.Action) {
				a.UID = "uid-web"
				a.Subresource = "scale"
				a.PatchType = types.JSONPatchType
				a.PatchData = []byte(`[{"op":"replace","path":"/spec/replicas","value":0}]`)
			}),
		},
		{
			name: "apply the status subresource",
			call: `kreact.apply({apiVersion: "apps/v1", kind: "Deployment", metadata: {name: "web", namespace: "default"}, status: {observedGeneration: 1}}, {subresource: "status"})`,
			want: with(base(actions.Apply), func(a *actions.Action) {
				a.Subresource = "status"
				a.Object = map[string]any{
					"apiVersion": "apps/v1", "kind": "Deployment",
					"metadata": map[string]any{"name": "web", "namespace": "default"},
					"status":   map[string]any{"observedGeneration": int64(1)},
				}
			}),
		},
		{
			name: "delete",
			call: `kreact.delete(obj)`,
			want: with(base(actions.Delete), func(a *actions.Action) { a.UID = "uid-web" }),
		},
		{
			name: "event",
			call: `kreact.event(obj, {type: "Warning", reason: "TooFewReplicas", message: "only " + obj.spec.replicas})`,
			want: with(base(actions.Event), func(a *actions.Action) {
				a.UID = "uid-web"
				a.EventType, a.Reason, a.Message = "Warning", "TooFewReplicas", "only 2"
			}),
		},
		{
			name: "event defaults to Normal",
			call: `kreact.event({resource: "deploy", namespace: "default", name: "web"}, {reason: "Seen"})`,
			want: with(base(actions.Event), func(a *actions.Action) { a.EventType, a.Reason = "Normal", "Seen" }),
		},
		{
			name: "condition through the status subresource, for the object's generation",
			call: `kreact.setCondition(obj, {type: "Ready", status: "True", reason: "Up", message: "all " + obj.spec.replicas})`,
			want: with(base(actions.SetCondition), func(a *actions.Action) {
				a.UID = "uid-web"
				a.Subresource = "status"
				a.Condition = &actions.Condition{Type: "Ready", Status: "True", Reason: "Up", Message: "all 2", ObservedGeneration: 7}
			}),
		},
		{
			name: "condition with its own generation",
			call: `kreact.setCondition({apiVersion: "apps/v1", kind: "Deployment", metadata: {namespace: "default", name: "web", generation: 3}}, {type: "Ready", status: "Unknown", observedGeneration: 5})`,
			want: with(base(actions.SetCondition), func(a *actions.Action) {
				a.Subresource = "status"
				a.Condition = &actions.Condition{Type: "Ready", Status: "Unknown", ObservedGeneration: 5}
			}),
		},
		{
			name: "condition on a resource without a status subresource",
			call: `kreact.setCondition({resource: "cm", namespace: "default", name: "web-config"}, {type: "Synced", status: "False"})`,
			want: with(base(actions.SetCondition), func(a *actions.Action) {
				cm(a)
				a.Condition = &actions.Condition{Type: "Synced", Status: "False"}
			}),
		},
		{
			name: "http with a JSON body",
			call: `kreact.http({url: "https://hooks.example.com/x?a=1", headers: {"X-Token": "t"}, body: {name: obj.metadata.name, n: 1, html: "<b>"}})`,
			want: actions.Action{Rule: "test-rule", Verb: actions.HTTP, Request: &actions.HTTPRequest{
				Method: "POST", URL: "https://hooks.example.com/x?a=1",
				Headers: map[string]string{"X-Token": "t", "Content-Type": "application/json"},
				Body:    []byte(`{"html":"<b>","n":1,"name":"web"}`),
			}},
		},
		{
			name: "http with a string body",
			call: `kreact.http({url: "http://svc.ns:8080/hook", method: "put", body: "plain", headers: {"content-type": "text/plain"}})`,
			want: actions.Action{Rule: "test-rule", Verb: actions.HTTP, Request: &actions.HTTPRequest{
				Method: "PUT", URL: "http://svc.ns:8080/hook",
				Headers: map[string]string{"content-type": "text/plain"},
				Body:    []byte("plain"),
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			src := "function onAdd(obj, ctx) {\n  const r = " + tt.call + ";\n  if (r !== undefined) throw new Error('returned ' + r);\n}"
			r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
			if _, err := r.Call(addEvent); err != nil {
				t.Fatal(err)
			}
			got := h.recorded()
			if len(got) != 1 {
				t.Fatalf("%d actions, want 1: %+v", len(got), got)
			}
			want := tt.want
			want.Origin = positionOf(want.Rule, "rule.js", src, tt.call[strings.Index(tt.call, "("):])
			if !reflect.DeepEqual(got[0], want) {
				t.Errorf("action:\n%s\nwant:\n%s", dump(got[0]), dump(want))
			}
		})
	}
}

func dump(a actions.Action) string {
	s := fmt.Sprintf("%+v", a)
	if a.PatchData != nil {
		s += "\nPatchData: " + string(a.PatchData)
	}
	if a.Request != nil {
		s += fmt.Sprintf("\nRequest: %+v body %s", *a.Request, a.Request.Body)
	}
	return s
}

func hashOf(t *testing.T, v any) string {
	t.Helper()
	b, err := canonicalJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestActionOptions(t *testing.T) {
	h := newFakeHost()
	src := `function onAdd(obj) {
  for (let i = 0; i < 3; i++) kreact.delete(obj);
}`
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "limited", MaxActions: 2, DryRun: true})
	_, err := r.Call(addEvent)
	if err == nil || !strings.Contains(err.Error(), "delete: more than 2 actions in one call") {
		t.Fatalf("Call = %v, want the action limit", err)
	}
	got := h.recorded()
	if len(got) != 2 || !got[0].DryRun || got[0].Rule != "limited" {
		t.Errorf("actions = %+v", got)
	}
	// The count starts over with each call.
	h.actions = nil
	_, _ = r.Call(addEvent)
	if n := len(h.recorded()); n != 2 {
		t.Errorf("second call queued %d actions, want 2", n)
	}
}

// TestViewTargets checks targets read from the objects of events, which
// patch reads from the Go map rather than through script values: the
// shapes it does not take go the slow way, with the same messages.
func TestViewTargets(t *testing.T) {
	obj := func(md any, extra map[string]any) *unstructured.Unstructured {
		o := map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}
		if md != nil {
			o["metadata"] = md
		}
		for k, v := range extra {
			o[k] = v
		}
		return &unstructured.Unstructured{Object: o}
	}
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want string // the action's target, or the exception message
	}{
		{"object", obj(map[string]any{"namespace": "default", "name": "web", "uid": "u1"}, nil), "default/web u1"},
		{"null uid", obj(map[string]any{"namespace": "default", "name": "web", "uid": nil}, nil), "default/web "},
		{"name not a string", obj(map[string]any{"namespace": "default", "name": int64(7)}, nil), "TypeError: patch: target metadata.name must be a string"},
		{"uid not a string", obj(map[string]any{"namespace": "default", "name": "web", "uid": map[string]any{}}, nil), "TypeError: patch: target metadata.uid must be a string"},
		{"no name", obj(map[string]any{"namespace": "default"}, nil), "TypeError: patch: target has no name"},
		{"no namespace", obj(map[string]any{"name": "web"}, nil), "TypeError: patch: a namespace is required for deployments.apps"},
		{"no metadata", obj(nil, map[string]any{"namespace": "default", "name": "top"}), "default/top "},
		{"metadata not an object", obj("x", map[string]any{"namespace": "default", "name": "top"}), "default/top "},
		{"resource reference", obj(nil, map[string]any{"resource": "cm", "namespace": "default", "name": "c"}), "default/c "},
		{"kind not a string", obj(map[string]any{"namespace": "default", "name": "web"}, map[string]any{"kind": true}), "TypeError: patch: target kind must be a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			r := mustRuntime(t, "rule.js", `function onAdd(obj) { kreact.patch(obj, {}); }`, h, RuntimeOptions{})
			_, err := r.Call(event.Event{Type: event.Add, Object: tt.obj, Resource: deployments})
			got := ""
			if se := (*event.ScriptError)(nil); errors.As(err, &se) {
				got = se.Message
			} else if err != nil {
				t.Fatal(err)
			} else if a := h.recorded(); len(a) == 1 {
				got = a[0].Namespace + "/" + a[0].Name + " " + string(a[0].UID)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestTargetsOfEveryView: an object a script got from the call before
// (kept in its global state), from kreact.get or nested in another is a
// target like the call's own objects, and each action names its own
// resource's apiVersion.
func TestTargetsOfEveryView(t *testing.T) {
	h := newFakeHost(&unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "default", "name": "settings", "uid": "u-settings"},
	}})
	src := `let kept;
function onUpdate(oldObj, newObj) {
  if (kept === undefined) { kept = newObj; return; }
  kreact.patch(kept, {a: 1});
  kreact.patch(oldObj, {b: 2});
  kreact.patch(kreact.get("configmaps", "default", "settings"), {c: 3});
  kreact.patch(newObj, {d: 4});
}`
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	call := func(old, obj string) {
		t.Helper()
		ev := event.Event{Type: event.Update, OldObject: deployment("default", old, 1), Object: deployment("default", obj, 1), Resource: deployments}
		if _, err := r.Call(ev); err != nil {
			t.Fatal(err)
		}
	}
	call("first-old", "first")
	call("second-old", "second")
	var got []string
	for _, a := range h.recorded() {
		got = append(got, a.APIVersion+" "+a.Namespace+"/"+a.Name+" "+string(a.PatchData))
	}
	want := []string{
		`apps/v1 default/first {"a":1}`,
		`apps/v1 default/second-old {"b":2}`,
		`v1 default/settings {"c":3}`,
		`apps/v1 default/second {"d":4}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("actions:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestPatchesThenObjects: the maps of a merge patch are reused once it is
// encoded; what a later action asks for is its own.
func TestPatchesThenObjects(t *testing.T) {
	h := newFakeHost()
	src := `function onAdd(obj) {
  kreact.patch(obj, {a: {b: 1}, c: [{d: 2}]});
  kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "x", namespace: "default"}, data: {k: "v"}});
  kreact.patch(obj, {a: {e: 3}});
  kreact.patch(obj, {spec: {replicas: 4}});
}`
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	for range 2 {
		h.actions = nil
		if _, err := r.Call(addEvent); err != nil {
			t.Fatal(err)
		}
		got := h.recorded()
		if len(got) != 4 {
			t.Fatalf("actions: %+v", got)
		}
		want := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "x", "namespace": "default"}, "data": map[string]any{"k": "v"}}
		if !reflect.DeepEqual(got[1].Object, want) {
			t.Errorf("applied %v, want %v", got[1].Object, want)
		}
		for i, want := range map[int]string{0: `{"a":{"b":1},"c":[{"d":2}]}`, 2: `{"a":{"e":3}}`, 3: `{"spec":{"replicas":4}}`} {
			if string(got[i].PatchData) != want {
				t.Errorf("patch %d = %s, want %s", i, got[i].PatchData, want)
			}
		}
	}
}

var errForbidden = errors.New("rule may not patch deployments.apps")

func TestEnqueueError(t *testing.T) {
	src := `function onAdd(obj) {
  try {
    kreact.patch(obj, {spec: {replicas: 1}});
  } catch (e) {
    kreact.log("caught " + e.name + ": " + e.message);
  }
  kreact.delete(obj);
}`
	h := newFakeHost()
	h.enqueueErr = errForbidden
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	_, err := r.Call(addEvent)
	if !errors.Is(err, errForbidden) {
		t.Fatalf("Call = %v, want it to wrap the host's error", err)
	}
	var se *event.ScriptError
	if !errors.As(err, &se) || se.Position.String() != position("rule.js", src, "(obj);\n}") {
		t.Errorf("error = %v, want it at the delete", err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "caught Error: patch deployments.apps default/web: rule may not patch deployments.apps" {
		t.Errorf("logs = %q", got)
	}
}

func TestHashAndLog(t *testing.T) {
	src := `function onAdd(obj) {
  const a = kreact.hash({x: 1, y: [true, null, "s"], z: {b: 2, a: 1}});
  const b = kreact.hash({z: {a: 1, b: 2}, y: [true, null, "s"], x: 1.0});
  kreact.log(a === b ? "stable" : "unstable");
  kreact.log(kreact.hash(obj.spec) === kreact.hash(kreact.clone(obj.spec)) ? "same" : "different");
  kreact.log(kreact.hash("abc"));
  kreact.warn("careful", {replicas: obj.spec.replicas, labels: obj.metadata.labels});
  kreact.error({not: "a string"});
  console.log("console", 1, true, null, undefined, {a: [1]}, obj.metadata.labels, () => 1);
  console.warn("w");
  console.error("e");
  console.debug("d");
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "hashing"})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(`"abc"`))
	want := []logRecord{
		{slog.LevelInfo, "stable", nil},
		{slog.LevelInfo, "same", nil},
		{slog.LevelInfo, hex.EncodeToString(sum[:]), nil},
		{slog.LevelWarn, "careful", map[string]any{"replicas": int64(2), "labels": map[string]any{"app": "web", "tier": "web"}}},
		{slog.LevelError, `{"not":"a string"}`, nil},
		{slog.LevelInfo, `console 1 true null undefined {"a":[1]} {"app":"web","tier":"web"} () => 1`, nil},
		{slog.LevelWarn, "w", nil},
		{slog.LevelError, "e", nil},
		{slog.LevelDebug, "d", nil},
	}
	if len(h.logs) != len(want) {
		t.Fatalf("logs = %+v", h.logs)
	}
	for i, w := range want {
		got := h.logs[i]
		if got.Level != w.Level || got.Msg != w.Msg {
			t.Errorf("log %d = %v %q, want %v %q", i, got.Level, got.Msg, w.Level, w.Msg)
		}
		if origin, _ := got.Attrs["origin"].(string); got.Attrs["rule"] != "hashing" || !strings.HasPrefix(origin, "rule.js:") {
			t.Errorf("log %d attrs = %v", i, got.Attrs)
		}
		for k, v := range w.Attrs {
			if !reflect.DeepEqual(got.Attrs[k], v) {
				t.Errorf("log %d attr %s = %#v, want %#v", i, k, got.Attrs[k], v)
			}
		}
	}
	if got := h.logs[3].Attrs["origin"]; got != position("rule.js", src, `("careful"`) {
		t.Errorf("origin of kreact.warn = %v", got)
	}
}

// Fields named like the attributes every record has already are renamed,
// so that no record has an attribute twice.
func TestLogFieldsDoNotRepeatAttributes(t *testing.T) {
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", "function onAdd(obj) {\n  kreact.log(\"x\", {rule: \"mine\", origin: 1, other: 2});\n}", h, RuntimeOptions{Rule: "r"})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"rule": "r", "origin": "rule.js:2:13", "field.rule": "mine", "field.origin": int64(1), "other": int64(2)}
	if len(h.logs) != 1 || fmt.Sprint(h.logs[0].Attrs) != fmt.Sprint(want) {
		t.Errorf("logs = %+v, want attributes %v", h.logs, want)
	}
}

// An undefined log field, most often a misspelt property, is logged as
// undefined: the call and its actions go on (the call threw, and its
// actions were dropped).
func TestLogUndefinedField(t *testing.T) {
	h := newFakeHost()
	src := "function onAdd(obj) {\n  const f = Object.freeze({name: obj.metadata.nme, n: 1});\n  kreact.log(\"x\", f);\n  kreact.warn(\"y\", {a: undefined});\n  kreact.patch(obj, {metadata: {labels: {seen: String(Object.keys(f).length)}}});\n}"
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "r"})
	out, err := r.Call(addEvent)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || string(out[0].PatchData) != `{"metadata":{"labels":{"seen":"2"}}}` {
		t.Errorf("actions = %+v, want the patch", out)
	}
	if len(h.logs) != 2 || h.logs[0].Attrs["name"] != "undefined" || h.logs[0].Attrs["n"] != int64(1) || h.logs[1].Attrs["a"] != "undefined" {
		t.Errorf("logs = %+v, want name and a undefined", h.logs)
	}
}

func TestLogLimit(t *testing.T) {
	src := `function onAdd(obj) {
  kreact.log("é".repeat(10000));
  for (let i = 0; i < 1000; i++) console.log("line " + i);
}`
	h := newFakeHost()
	// A generous timeout: the test is about the log's limit, and a
	// thousand lines under the race detector on a loaded machine can take
	// over the default second.
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Timeout: 30 * time.Second})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	got := h.messages()
	if len(got) != maxLogsPerCall+1 || !strings.Contains(got[maxLogsPerCall], "dropping the rest") {
		t.Errorf("%d log records, last %q", len(got), got[len(got)-1])
	}
	if first := got[0]; len(first) > maxLogSize+len("…") || !strings.HasSuffix(first, "é…") {
		t.Errorf("long message not cut at a character boundary: %d bytes, ends %q", len(first), first[len(first)-8:])
	}
}

// TestConfigHashRule runs testdata/config-hash.js, a rule written against
// kreact.d.ts (tsc --checkJs accepts it), on a ConfigMap update.
func TestConfigHashRule(t *testing.T) {
	const file = "testdata/config-hash.js"
	src, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Compile(file, string(src), CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if p.HasHandler(event.Add) || !p.HasHandler(event.Update) {
		t.Fatal("want only onUpdate")
	}
	cm := func(v string) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "web-config", "namespace": "default"},
			"data":     map[string]any{"key": v},
		}}
	}
	uses := func(d *unstructured.Unstructured, config string) *unstructured.Unstructured {
		d.SetLabels(map[string]string{"config": config})
		return d
	}
	h := newFakeHost(
		uses(deployment("default", "web", 1), "web-config"),
		uses(deployment("default", "api", 1), "other-config"),
		uses(deployment("prod", "web", 1), "web-config"),
	)
	r, err := NewRuntime(p, h, RuntimeOptions{Rule: "config-hash"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	oldCM, newCM := cm("a"), cm("b")
	ev := event.Event{Type: event.Update, OldObject: oldCM, Object: newCM, Resource: configMaps,
		Changed: event.ChangedPaths(oldCM.Object, newCM.Object, []string{"status"})}
	if _, err := r.Call(ev); err != nil {
		t.Fatal(err)
	}
	got := h.recorded()
	if len(got) != 2 || got[0].Verb != actions.Patch || got[1].Verb != actions.Event {
		t.Fatalf("actions: %+v", got)
	}
	hash := hashOf(t, map[string]any{"key": "b"})
	if want := `{"spec":{"template":{"metadata":{"annotations":{"example.com/config-hash":"` + hash + `"}}}}}`; string(got[0].PatchData) != want || got[0].Namespace != "default" || got[0].Name != "web" {
		t.Errorf("patch = %s %s/%s", got[0].PatchData, got[0].Namespace, got[0].Name)
	}
	if got[1].Message != "web-config changed at 2026-03-04T05:06:07.000Z" {
		t.Errorf("event message = %q", got[1].Message)
	}
}

// A call is a transaction: Call hands out the actions of a call that
// returned normally, in order, and none of a call that failed after asking
// for some.
func TestCallIsTransactional(t *testing.T) {
	src := `function onAdd(obj, ctx) {
  kreact.delete(obj);
  kreact.patch(obj, {metadata: {labels: {a: "b"}}});
  if (obj.metadata.labels && obj.metadata.labels.fail === "throw") throw new Error("after two actions");
  if (obj.metadata.labels && obj.metadata.labels.fail === "limit") kreact.delete(obj);
  if (obj.metadata.labels && obj.metadata.labels.fail === "loop") for (;;) {}
}`
	object := func(fail string) event.Event {
		o := addEvent.Object.DeepCopy()
		if fail != "" {
			o.SetLabels(map[string]string{"fail": fail})
		}
		return event.Event{Type: event.Add, Object: o, Resource: addEvent.Resource}
	}
	tests := []struct {
		name    string
		fail    string
		wantErr string
	}{
		{name: "returns normally", fail: ""},
		{name: "throws after two actions", fail: "throw", wantErr: "after two actions"},
		{name: "exceeds the action limit", fail: "limit", wantErr: "more than 2 actions in one call"},
		{name: "times out after two actions", fail: "loop", wantErr: "timed out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{Rule: "tx", MaxActions: 2, Timeout: 50 * time.Millisecond})
			got, err := r.Call(object(tt.fail))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Call = %v", err)
				}
				if len(got) != 2 || got[0].Verb != actions.Delete || got[1].Verb != actions.Patch || got[0].Rule != "tx" {
					t.Errorf("actions = %+v, want delete then patch of rule tx", got)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Call = %v, want an error containing %q", err, tt.wantErr)
			}
			if len(got) != 0 {
				t.Errorf("a failed call handed out %d actions, want none", len(got))
			}
			// The next call starts a new transaction.
			if got, err := r.Call(object("")); err != nil || len(got) != 2 {
				t.Errorf("next call = %d actions, %v; want 2, nil", len(got), err)
			}
		})
	}
}

func TestReplica(t *testing.T) {
	src := `function onAdd(obj) {
  const r = kreact.replica();
  kreact.log(r.name + " " + r.leader);
}`
	leading := true
	for _, tc := range []struct {
		name string
		opts RuntimeOptions
		lead bool
		want string
	}{
		{name: "unset", want: " true"},
		{name: "leader", opts: RuntimeOptions{Replica: func() Replica { return Replica{Name: "pod-0", Leader: leading} }}, lead: true, want: "pod-0 true"},
		{name: "standby", opts: RuntimeOptions{Replica: func() Replica { return Replica{Name: "pod-1", Leader: leading} }}, want: "pod-1 false"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Read at each call: whether a replica leads changes while it runs.
			leading = tc.lead || tc.opts.Replica == nil
			h := newFakeHost()
			r := mustRuntime(t, "rule.js", src, h, tc.opts)
			if _, err := r.Call(addEvent); err != nil {
				t.Fatal(err)
			}
			if got := h.messages(); len(got) != 1 || got[0] != tc.want {
				t.Errorf("logs = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestInstalledNames: the areas of the API together install every
// function of the kreact and console globals, each once, and nothing else.
func TestInstalledNames(t *testing.T) {
	src := `function onAdd() {
  kreact.log(Object.keys(kreact).join(","));
  kreact.log(Object.keys(console).join(","));
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"after,apply,clone,create,delete,error,event,get,hash,http,jsonPatch,list,log,now,once,owner,patch,replica,setCondition,warn",
		"debug,error,info,log,warn",
	}
	if got := h.messages(); !slices.Equal(got, want) {
		t.Errorf("installed:\n%q\nwant\n%q", got, want)
	}
}

func TestCallsInstalledTwice(t *testing.T) {
	c := calls{}
	c.add("get", nil)
	defer func() {
		if recover() == nil {
			t.Error("a second add of the same name did not panic")
		}
	}()
	c.add("get", nil)
}

// TestAPIFunctionsBuiltWhenRead: the kreact global builds a function's
// object when a script first reads it, the same object at every read
// after, named as the script calls it; its properties can be neither
// replaced, defined nor deleted, and none can be added.
func TestAPIFunctionsBuiltWhenRead(t *testing.T) {
	src := `"use strict";
function onAdd() {
  const errs = [];
  try { delete kreact.patch; } catch (e) { errs.push(e.name); }
  try { Object.defineProperty(kreact, "patch", {value: 1}); } catch (e) { errs.push(e.name); }
  try { kreact.extra = 1; } catch (e) { errs.push(e.name); }
  kreact.log([kreact.patch === kreact.patch, kreact.patch.name, kreact.patch.length, typeof kreact.patch,
    "patch" in kreact, kreact.nothing, delete kreact.nothing, Object.getOwnPropertyNames(console).join(" "),
    errs.join(",")].join(" "));
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	a, ok := r.env.vm.Get("kreact").Export().(*apiObject)
	if !ok {
		t.Fatalf("kreact is a %T", r.env.vm.Get("kreact").Export())
	}
	for i, f := range a.built {
		if f != nil {
			t.Errorf("kreact.%s was built before the script read it", a.names[i])
		}
	}
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	want := "true patch 0 function true  true debug error info log warn TypeError,TypeError,TypeError"
	if got := h.messages(); len(got) != 1 || got[0] != want {
		t.Errorf("logs = %q\nwant %q", got, want)
	}
}
