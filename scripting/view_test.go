package scripting

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/dop251/goja"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/event"
)

// logged runs body as onAdd(obj, ctx) on a Deployment and returns what it
// logged.
func logged(t *testing.T, body string) ([]string, error) {
	t.Helper()
	h := newFakeHost(deployment("default", "other", 1), deployment("prod", "api", 4))
	r := mustRuntime(t, "rule.js", "function onAdd(obj, ctx) {\n"+body+"\n}", h, RuntimeOptions{})
	_, err := r.Call(event.Event{Type: event.Add, Object: deployment("default", "web", 2), Resource: deployments})
	return h.messages(), err
}

func TestViewReads(t *testing.T) {
	tests := []struct {
		expr string
		want string // JSON.stringify of expr
	}{
		{`obj.spec.replicas`, `2`},
		{`obj.spec.ratio`, `0.5`},
		{`obj.spec.paused`, `false`},
		{`obj.metadata.name`, `"web"`},
		{`obj.metadata.missing`, `undefined`},
		{`obj.metadata.annotations["a.b/c"]`, `"dotted"`},
		{`obj.spec.template.spec.containers[0].args`, `["-v",null]`},
		{`Object.keys(obj.metadata.labels)`, `["app","tier"]`},
		{`Object.entries(obj.metadata.labels)`, `[["app","web"],["tier","web"]]`},
		{`Object.values(obj.status)`, `[2]`},
		{`["spec" in obj, "nope" in obj, obj.hasOwnProperty("kind")]`, `[true,false,true]`},
		{`obj.spec === obj.spec && obj.spec.template.spec.containers[1] === obj.spec.template.spec.containers[1]`, `true`},
		// A third child, and the keys, beside the first two children.
		{`(() => { const a = [obj.status, obj.spec, obj.metadata, obj.status]; return [a[0] === a[3], obj.metadata === a[2], obj.spec === a[1], obj.status === a[0], Object.keys(obj)]; })()`, `[true,true,true,true,["apiVersion","kind","metadata","spec","status"]]`},
		{`JSON.stringify(obj.metadata.labels)`, `"{\"app\":\"web\",\"tier\":\"web\"}"`},
		{`obj.status`, `{"readyReplicas":2}`},
		{`Array.isArray(obj.spec.template.spec.containers)`, `true`},
		{`obj.spec.template.spec.containers.length`, `2`},
		{`obj.spec.template.spec.containers.map(c => c.name)`, `["app","sidecar"]`},
		{`obj.spec.template.spec.containers.filter(c => c.image.startsWith("envoy")).map(c => c.name)`, `["sidecar"]`},
		{`obj.spec.template.spec.containers.find(c => c.name === "app").image`, `"nginx:1.27"`},
		{`obj.spec.template.spec.containers.some(c => c.name === "x")`, `false`},
		{`(() => { const out = []; for (const c of obj.spec.template.spec.containers) out.push(c.name); return out; })()`, `["app","sidecar"]`},
		{`(() => { const out = []; for (const k in obj.metadata.labels) out.push(k); return out; })()`, `["app","tier"]`},
		{`[...obj.spec.template.spec.containers].length`, `2`},
		{`obj.spec.template.spec.containers.slice(1).map(c => c.name)`, `["sidecar"]`},
		{`obj.spec.template.spec.containers[0].args.indexOf("-v")`, `0`},
		{`obj.spec.template.spec.containers[0].args.includes(null)`, `true`},
		{`obj.spec.template.spec.containers[0].args.join("|")`, `"-v|"`},
		{`obj.spec.template.spec.containers[5]`, `undefined`},
		{`({...obj.metadata.labels, extra: 1})`, `{"app":"web","tier":"web","extra":1}`},
		{`Object.assign({}, obj.status)`, `{"readyReplicas":2}`},
		{`typeof obj.metadata.uid`, `"string"`},
		{`kreact.get("deploy", "prod", "api").spec.replicas`, `4`},
		{`kreact.get("deploy", "prod", "missing")`, `null`},
		{`kreact.list("deployments.apps", {namespace: "default"}).map(d => d.metadata.name)`, `["other"]`},
		{`kreact.list("deploy").map(d => d.metadata.namespace + "/" + d.metadata.name)`, `["default/other","prod/api"]`},
		{`kreact.list("deploy", {labelSelector: "app=api"}).length`, `1`},
		{`kreact.list("deploy", {labelSelector: "app in (web,other),tier=web"})[0].metadata.name`, `"other"`},
		{`kreact.list("configmaps")`, `[]`},
	}
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			got, err := logged(t, "kreact.log(String(JSON.stringify("+tt.expr+")));")
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 1 || got[0] != tt.want {
				t.Errorf("got %q, want %s", got, tt.want)
			}
		})
	}
}

func TestViewWritesThrow(t *testing.T) {
	tests := []string{
		`obj.metadata.name = "x";`,
		`obj.newField = 1;`,
		`obj.spec.template.spec.containers[0].image = "evil";`,
		`delete obj.metadata.labels.app;`,
		`delete obj.nope;`,
		`obj.spec.template.spec.containers.push({});`,
		`obj.spec.template.spec.containers.pop();`,
		`obj.spec.template.spec.containers.length = 0;`,
		`obj.spec.template.spec.containers[0].args.sort();`,
		`obj.spec.template.spec.containers.reverse();`,
		`obj.spec.template.spec.containers[7] = {};`,
		`Object.assign(obj.metadata.labels, {a: "b"});`,
		`Object.defineProperty(obj, "x", {value: 1, writable: true, enumerable: true, configurable: true});`,
		`kreact.list("deploy").push(obj);`,
		`kreact.get("deploy", "prod", "api").spec.replicas++;`,
		`ctx.changed.push("x");`,
		`Object.setPrototypeOf(obj, {spec: "shadow"});`,
		`Object.setPrototypeOf(obj.metadata.labels, null);`,
		`Object.setPrototypeOf(obj.spec.template.spec.containers, {});`,
		`Reflect.setPrototypeOf(obj, {});`,
		`Reflect.setPrototypeOf(obj.spec.template.spec.containers[0].args, Object.prototype);`,
		`Object.setPrototypeOf(kreact.list("deploy"), {});`,
		`Object.setPrototypeOf(ctx, {});`,
		`obj.__proto__ = {};`,
		`Object.getOwnPropertyDescriptor(Object.prototype, "__proto__").set.call(obj.spec.template.spec.containers, {});`,
		`Object.getOwnPropertyDescriptor(Object.prototype, "__proto__").set.call(obj, {});`,
	}
	for _, body := range tests {
		t.Run(body, func(t *testing.T) {
			obj := deployment("default", "web", 2)
			before := obj.DeepCopy()
			h := newFakeHost(deployment("prod", "api", 4))
			r := mustRuntime(t, "rule.js", "function onAdd(obj, ctx) {\n  "+body+"\n}", h, RuntimeOptions{})
			_, err := r.Call(event.Event{Type: event.Add, Object: obj, Resource: deployments})
			var se *event.ScriptError
			if !errors.As(err, &se) || se.Message != "TypeError: "+readOnlyMessage {
				t.Fatalf("Call = %v, want the read-only TypeError", err)
			}
			if se.Position.String() != "rule.js:2:"+se.Position.String()[len("rule.js:2:"):] {
				t.Errorf("Position = %q, want line 2", se.Position.String())
			}
			if !reflect.DeepEqual(obj.Object, before.Object) {
				t.Errorf("the object changed:\n%v\nwant\n%v", obj.Object, before.Object)
			}
			if got := h.objects[0]; got.GetName() != "api" || got.Object["spec"].(map[string]any)["replicas"] != int64(4) {
				t.Errorf("the host's object changed: %v", got.Object)
			}
		})
	}
	// goja refuses any non-index property on a dynamic array.
	if _, err := logged(t, "obj.spec.template.spec.containers.__proto__ = {};"); err == nil || !strings.Contains(err.Error(), "TypeError") {
		t.Errorf("assigning __proto__ of an array view = %v, want a TypeError", err)
	}
	// The prototypes of the script's own objects still change.
	msgs, err := logged(t, `const o = Object.setPrototypeOf({}, {a: 1}); const p = Reflect.setPrototypeOf(o, {a: 2}) ? o : null; const q = {}; q.__proto__ = {a: 3}; kreact.log([o.a, p.a, q.a].join(","));`)
	if err != nil || len(msgs) != 1 || !strings.HasSuffix(msgs[0], "2,2,3") {
		t.Errorf("setPrototypeOf on a plain object: %v, %q", err, msgs)
	}
	// Object.freeze cannot hold a view; it throws rather than lying.
	_, err = logged(t, "Object.freeze(obj);")
	if err == nil || !strings.Contains(err.Error(), "TypeError") {
		t.Errorf("Object.freeze(view) = %v, want a TypeError", err)
	}
}

func TestClone(t *testing.T) {
	obj := deployment("default", "web", 2)
	before := obj.DeepCopy()
	h := newFakeHost()
	src := `function onAdd(obj) {
  const c = kreact.clone(obj);
  c.spec.replicas = 5;
  c.metadata.labels.extra = "yes";
  delete c.status;
  c.spec.template.spec.containers.push({name: "third", image: "busybox"});
  c.spec.template.spec.containers[0].image = "nginx:1.28";
  kreact.log(JSON.stringify([c.spec.replicas, obj.spec.replicas, c.spec.template.spec.containers.length,
    obj.spec.template.spec.containers.length, Object.isFrozen(c), c === obj, c.spec.ratio]));
  const list = kreact.clone(kreact.list("deploy"));
  list.push(1);
  const s = kreact.clone({a: [1, {b: "x"}], d: new Date(0)});
  s.a[1].b = "y";
  kreact.log(JSON.stringify([list.length, s, kreact.clone(3), kreact.clone("s"), kreact.clone(null)]));
  kreact.apply(c);
}`
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	if _, err := r.Call(event.Event{Type: event.Add, Object: obj, Resource: deployments}); err != nil {
		t.Fatal(err)
	}
	want := []string{
		`[5,2,3,2,false,false,0.5]`,
		`[1,{"a":[1,{"b":"y"}],"d":"1970-01-01T00:00:00Z"},3,"s",null]`,
	}
	if got := h.messages(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("logs:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !reflect.DeepEqual(obj.Object, before.Object) {
		t.Errorf("the Go object changed:\n%v\nwant\n%v", obj.Object, before.Object)
	}
	applied := h.recorded()
	if len(applied) != 1 {
		t.Fatalf("actions: %+v", applied)
	}
	u := unstructured.Unstructured{Object: applied[0].Object}
	replicas, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
	containers, _, _ := unstructured.NestedSlice(u.Object, "spec", "template", "spec", "containers")
	if replicas != 5 || u.GetLabels()["extra"] != "yes" || len(containers) != 3 || u.Object["status"] != nil {
		t.Errorf("applied object = %v", u.Object)
	}
}

// TestKeptContext: a ctx the script keeps in its global state goes on
// showing the call it was made for, not later ones.
func TestKeptContext(t *testing.T) {
	h := newFakeHost()
	src := `let kept;
function onUpdate(oldObj, newObj, ctx) {
  if (kept === undefined) { kept = ctx; return; }
  kreact.log([kept.event, kept.initial, kept.changed.join(","), kept.resource, ctx === kept].join(" "));
}
function onAdd(obj, ctx) { onUpdate(null, obj, ctx); }`
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	first := event.Event{Type: event.Add, Object: deployment("default", "web", 2), Initial: true, Resource: deployments}
	second := event.Event{Type: event.Update, OldObject: first.Object, Object: deployment("default", "web", 3), Changed: []string{"spec.replicas"}, Resource: configMaps}
	for _, ev := range []event.Event{first, second} {
		if _, err := r.Call(ev); err != nil {
			t.Fatal(err)
		}
	}
	if got, want := h.messages(), []string{"add true  deployments.apps false"}; !reflect.DeepEqual(got, want) {
		t.Errorf("logs = %q, want %q", got, want)
	}
}

// TestCallKeepsNoObjects: once a call has returned, the runtime refers to
// none of its objects (which the cache may drop), only the script's
// global state may.
func TestCallKeepsNoObjects(t *testing.T) {
	r := mustRuntime(t, "rule.js", `function onUpdate(oldObj, obj, ctx) { kreact.log(obj.spec.template.spec.containers[0].name + oldObj.metadata.name); }`, newFakeHost(), RuntimeOptions{})
	ev := event.Event{Type: event.Update, OldObject: deployment("default", "web", 1), Object: deployment("default", "web", 2), Resource: deployments}
	for range 2 {
		if _, err := r.Call(ev); err != nil {
			t.Fatal(err)
		}
		e := r.env
		if e.views != nil || e.callEv.Object != nil || e.callEv.OldObject != nil || e.ev != nil || e.args != [3]goja.Value{} {
			t.Errorf("after the call: views %d, event %+v, ev %v, args %v", len(e.views), e.callEv, e.ev, e.args)
		}
	}
}
