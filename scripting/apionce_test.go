package scripting

import (
	"errors"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
)

func TestOnce(t *testing.T) {
	src := `function onAdd(obj) {
  kreact.log(String(kreact.once(obj)) + " " + String(kreact.once(obj)));
  kreact.delete(obj);
}`
	h := newFakeHost()
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "greeter"})
	out, err := r.Invoke(addEvent)
	if err != nil {
		t.Fatal(err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "true true" {
		t.Errorf("logs = %q, want true twice", got)
	}
	if len(out.Actions) != 1 || out.Actions[0].Verb != actions.Delete {
		t.Errorf("actions = %+v, want the delete only", out.Actions)
	}
	m := out.Once
	if m == nil || m.Verb != actions.Patch || m.PatchType != types.MergePatchType || m.Name != "web" || m.Rule != "greeter" ||
		string(m.PatchData) != `{"metadata":{"annotations":{"once.kreact.dev/greeter":"2026-03-04T05:06:07Z"},"uid":"uid-web"}}` {
		t.Errorf("marker = %+v", m)
	}

	// A marked object: false, and no marker.
	ev := addEvent
	ev.Object = addEvent.Object.DeepCopy()
	ev.Object.SetAnnotations(map[string]string{event.OnceAnnotation("greeter"): "2026-01-01T00:00:00Z"})
	h = newFakeHost()
	r = mustRuntime(t, "rule.js", src, h, RuntimeOptions{Rule: "greeter"})
	if out, err = r.Invoke(ev); err != nil {
		t.Fatal(err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "false false" || out.Once != nil {
		t.Errorf("marked: logs = %q, marker %+v; want false and none", got, out.Once)
	}
}

func TestOnceRefusals(t *testing.T) {
	tests := []struct {
		name, src string
		ev        event.Event
		forbid    bool
		want      string
	}{
		{"another object", `function onAdd(obj) {
  kreact.once({resource: "deploy", namespace: "default", name: "api"});
}`, addEvent, false, "TypeError: once: deployments.apps default/api is not the object of this call (deployments.apps default/web); once marks the object of the call"},
		{"on delete", `function onDelete(obj) {
  kreact.once(obj);
}`, event.Event{Type: event.Delete, Object: addEvent.Object, Resource: deployments}, false, "TypeError: once: the object is deleted; there is nothing left to mark"},
		{"on tick", `function onTick() {
  kreact.once({resource: "deploy", namespace: "default", name: "web"});
}`, event.Event{Type: event.Tick}, false, "TypeError: once: onTick has no object; once marks the object of the call"},
		{"may not patch", `function onAdd(obj) {
  kreact.once(obj);
}`, addEvent, true, "GoError: once: its marker is a patch of deployments.apps default/web: " + errForbidden.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			if tt.forbid {
				h.enqueueErr = errForbidden
			}
			r := mustRuntime(t, "rule.js", tt.src, h, RuntimeOptions{Rule: "greeter"})
			_, err := r.Invoke(tt.ev)
			var se *event.ScriptError
			if !errors.As(err, &se) {
				t.Fatalf("Invoke = %v, want a ScriptError", err)
			}
			if !strings.Contains(se.Message, strings.TrimPrefix(tt.want, "GoError: ")) {
				t.Errorf("message = %s\nwant      %s", se.Message, tt.want)
			}
			if !strings.HasPrefix(se.Position.String(), "rule.js:2:") {
				t.Errorf("Position = %s, want the call's line 2", se.Position)
			}
		})
	}
}
