package scripting

import (
	"errors"
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/event"
)

// webRef is the controller reference to addEvent's Deployment.
var webRef = map[string]any{
	"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-web",
	"controller": true, "blockOwnerDeletion": true,
}

func TestOwnerOption(t *testing.T) {
	tests := []struct {
		name string
		call string
		want []any // metadata.ownerReferences of the object
	}{
		{
			name: "create",
			call: `kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "default"}}, {owner: obj})`,
			want: []any{webRef},
		},
		{
			name: "apply keeps other owners and replaces one of the same uid",
			call: `kreact.apply({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "default", ownerReferences: [
  {apiVersion: "v1", kind: "ConfigMap", name: "other", uid: "uid-other"},
  {apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "uid-web"}]}}, {owner: obj})`,
			want: []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "other", "uid": "uid-other"}, webRef},
		},
		{
			name: "a cluster-scoped owner owns a namespaced child",
			call: `kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "default"}}, {owner: {apiVersion: "v1", kind: "Namespace", metadata: {name: "default", uid: "uid-ns"}}})`,
			want: []any{map[string]any{"apiVersion": "v1", "kind": "Namespace", "name": "default", "uid": "uid-ns", "controller": true, "blockOwnerDeletion": true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			r := mustRuntime(t, "rule.js", "function onAdd(obj, ctx) {\n  "+tt.call+";\n}", h, RuntimeOptions{})
			if _, err := r.Call(addEvent); err != nil {
				t.Fatal(err)
			}
			got := h.recorded()
			if len(got) != 1 {
				t.Fatalf("%d actions, want 1", len(got))
			}
			refs, _, _ := unstructured.NestedSlice(got[0].Object, "metadata", "ownerReferences")
			if !reflect.DeepEqual(refs, tt.want) {
				t.Errorf("ownerReferences\n got %v\nwant %v", refs, tt.want)
			}
		})
	}
}

func TestOwnerOptionRefusals(t *testing.T) {
	tests := []struct {
		call string
		want string
	}{
		{`kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "other"}}, {owner: obj})`,
			`TypeError: create: an object in namespace other cannot be owned by deployments.apps default/web in another namespace; use spec.finalizer and delete it in onDelete`},
		{`kreact.apply({apiVersion: "v1", kind: "Namespace", metadata: {name: "team"}}, {owner: obj})`,
			`TypeError: apply: a cluster-scoped namespaces cannot be owned by deployments.apps default/web, which is namespaced; use spec.finalizer and delete it in onDelete`},
		{`kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "default"}}, {owner: {resource: "deploy", namespace: "default", name: "web"}})`,
			`TypeError: create: options.owner has no metadata.uid: pass the owner as the rule read it (the handler's object, kreact.get), not a reference`},
		{`kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "default", ownerReferences: [{kind: "ReplicaSet", name: "rs", uid: "u", controller: true}]}}, {owner: obj})`,
			`TypeError: create: metadata.ownerReferences already names a controller, ReplicaSet rs; an object has at most one`},
		{`kreact.create({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "c", namespace: "default"}}, obj.metadata.name)`,
			`TypeError: create: options must be an object like {owner: obj}`},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			h := newFakeHost()
			src := "function onAdd(obj) {\n  const x = 1;\n  " + tt.call + ";\n}"
			r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
			_, err := r.Call(addEvent)
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Call = %v, want a ScriptError", err)
			}
			if se.Message != tt.want {
				t.Errorf("message = %s\nwant      %s", se.Message, tt.want)
			}
			if se.Position.String()[:len("rule.js:3:")] != "rule.js:3:" {
				t.Errorf("Position = %s, want the call's line 3", se.Position.String())
			}
		})
	}
}

func TestOwnerOf(t *testing.T) {
	owned := func(name string, refs ...any) *unstructured.Unstructured {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": "default", "ownerReferences": refs},
		}}
	}
	src := `function onAdd(obj) {
  for (const name of ["owned", "replaced", "orphan", "free"]) {
    const o = kreact.owner(kreact.get("configmaps", "default", name));
    kreact.log(name + ": " + (o === null ? "null" : o.kind + " " + o.metadata.name + " " + o.spec.replicas));
  }
}`
	other := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "uid-x"}
	h := newFakeHost(
		addEvent.Object,
		owned("owned", other, webRef),
		owned("replaced", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": "uid-old", "controller": true}),
		owned("orphan", map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "gone", "uid": "uid-gone", "controller": true}),
		owned("free", other),
	)
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	if _, err := r.Call(addEvent); err != nil {
		t.Fatal(err)
	}
	want := []string{"owned: Deployment web 2", "replaced: null", "orphan: null", "free: null"}
	if got := h.messages(); !reflect.DeepEqual(got, want) {
		t.Errorf("logs = %q, want %q", got, want)
	}
}
