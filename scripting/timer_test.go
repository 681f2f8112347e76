package scripting

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
)

// kreact.after asks for onTimer of the call's object; the request is part
// of the call's transaction and the last one of a call wins.
func TestAfter(t *testing.T) {
	tests := []struct {
		name    string
		call    string
		want    time.Duration
		wantErr string
	}{
		{name: "duration string", call: `kreact.after(obj, "10m")`, want: 10 * time.Minute},
		{name: "milliseconds", call: `kreact.after(obj, 1500)`, want: 1500 * time.Millisecond},
		{name: "a Date", call: `kreact.after(obj, new Date(Date.now() + 90000))`, want: 90 * time.Second},
		{name: "the past is now", call: `kreact.after(obj, -5)`, want: 0},
		{name: "the last one wins", call: `kreact.after(obj, "1h"); kreact.after(obj, "2s")`, want: 2 * time.Second},
		{name: "a reference to the object", call: `kreact.after({resource: "deploy", namespace: "default", name: "web"}, "1s")`, want: time.Second},
		{name: "bad duration", call: `kreact.after(obj, "ten minutes")`, wantErr: `TypeError: after: delay "ten minutes" is not a duration`},
		{name: "NaN", call: `kreact.after(obj, NaN)`, wantErr: `TypeError: after: delay is NaN`},
		{name: "too long", call: `kreact.after(obj, "9000h")`, wantErr: `TypeError: after: delay is longer than 8784h0m0s`},
		{name: "no delay", call: `kreact.after(obj)`, wantErr: `TypeError: after: want after(obj, delay)`},
		{name: "another object", call: `kreact.after({resource: "deploy", namespace: "default", name: "db"}, "1s")`,
			wantErr: `TypeError: after: deployments.apps default/db is not the object of this call (deployments.apps default/web)`},
		{name: "throws after asking", call: `kreact.after(obj, "1s"); throw new Error("boom")`, wantErr: "boom"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := "function onAdd(obj, ctx) {\n  " + tt.call + ";\n}\nfunction onTimer(obj, ctx) {}\n"
			r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{})
			out, err := r.Invoke(addEvent)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Invoke = %v, want an error containing %q", err, tt.wantErr)
				}
				if out.Timer != nil {
					t.Errorf("a failed call asked for a timer: %+v", out.Timer)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if out.Timer == nil || out.Timer.Delay != tt.want {
				t.Fatalf("Timer = %+v, want delay %v", out.Timer, tt.want)
			}
			if !strings.HasPrefix(out.Timer.Origin.String(), "rule.js:2:") {
				t.Errorf("Origin = %q, want rule.js:2:*", out.Timer.Origin.String())
			}
			// The next call starts a new transaction.
			if out, err := r.Invoke(event.Event{Type: event.Timer, Object: addEvent.Object, Resource: deployments}); err != nil || out.Timer != nil {
				t.Errorf("onTimer = %+v, %v; want no timer", out.Timer, err)
			}
		})
	}
}

// kreact.after needs an object, and an onTimer to call.
func TestAfterRefusals(t *testing.T) {
	tests := []struct {
		name, src string
		ev        event.Event
		wantErr   string
	}{
		{name: "onTick", src: `function onTick(ctx) { kreact.after({resource: "deploy", namespace: "default", name: "web"}, "1s"); } function onTimer() {}`,
			ev: event.Event{Type: event.Tick}, wantErr: "after: onTick has no object"},
		{name: "onDelete", src: `function onDelete(obj) { kreact.after(obj, "1s"); } function onTimer() {}`,
			ev: event.Event{Type: event.Delete, Object: addEvent.Object, Resource: deployments}, wantErr: "after: the object is deleted"},
		{name: "no onTimer", src: `function onAdd(obj) { kreact.after(obj, "1s"); }`,
			ev: addEvent, wantErr: "after: the script declares no onTimer(obj, ctx)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRuntime(t, "rule.js", tt.src, newFakeHost(), RuntimeOptions{})
			_, err := r.Invoke(tt.ev)
			var se *event.ScriptError
			if !errors.As(err, &se) || !strings.Contains(se.Message, tt.wantErr) {
				t.Fatalf("Invoke = %v, want a script error containing %q", err, tt.wantErr)
			}
		})
	}
}

// onTimer gets the object and ctx.event "timer".
func TestOnTimer(t *testing.T) {
	h := newFakeHost()
	src := `function onTimer(obj, ctx) { kreact.log(ctx.event + " " + obj.metadata.name + " " + ctx.resource); }`
	r := mustRuntime(t, "rule.js", src, h, RuntimeOptions{})
	if _, err := r.Invoke(event.Event{Type: event.Timer, Object: addEvent.Object, Resource: deployments}); err != nil {
		t.Fatal(err)
	}
	if got := h.messages(); len(got) != 1 || got[0] != "timer web deployments.apps" {
		t.Errorf("logs = %q, want [timer web deployments.apps]", got)
	}
}
