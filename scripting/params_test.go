package scripting

import (
	"strings"
	"testing"

	"github.com/kreact/kreact/event"
)

// TestUnusedArgs: the arguments a handler's declaration never reads are
// those whose names its text never spells; anything else reads them.
func TestUnusedArgs(t *testing.T) {
	tests := []struct {
		name, src string
		typ       event.Type
		want      uint8
	}{
		{"ctx unused", `function onUpdate(oldObj, newObj, ctx) { return newObj.a + oldObj.a; }`, event.Update, 0b100},
		{"old and ctx unused", `function onUpdate(oldObj, newObj, ctx) { return newObj.a; }`, event.Update, 0b101},
		{"all read", `function onUpdate(oldObj, newObj, ctx) { return [oldObj, newObj, ctx]; }`, event.Update, 0},
		{"nothing declared", `function onAdd() {}`, event.Add, 0},
		{"read in a closure", `function onAdd(obj, ctx) { return () => ctx.rule; }`, event.Add, 0b01},
		{"shorthand property", `function onAdd(obj, ctx) { return {obj, ctx}; }`, event.Add, 0},
		{"typeof", `function onAdd(obj, ctx) { return typeof ctx; }`, event.Add, 0b01},
		{"template", "function onAdd(obj, ctx) { return `${ctx}`; }", event.Add, 0b01},
		{"shadowed counts as read", `function onAdd(obj, ctx) { function f(ctx) { return ctx; } return f(obj); }`, event.Add, 0},
		{"arguments", `function onAdd(obj, ctx) { return arguments[1]; }`, event.Add, 0},
		{"eval", `function onAdd(obj, ctx) { return eval; }`, event.Add, 0},
		{"default value", `function onAdd(obj, ctx = 1) { return obj; }`, event.Add, 0},
		{"default reads another", `function onAdd(obj, ctx, x = ctx) { return obj; }`, event.Add, 0},
		{"destructured", `function onAdd(obj, {rule}) { return obj; }`, event.Add, 0},
		{"rest reads", `function onAdd(obj, ctx, ...rest) { return obj; }`, event.Add, 0b10},
		{"arrow", `const onDelete = (obj, ctx) => obj.a;`, event.Delete, 0b10},
		{"function expression", `var onTick = function (ctx) {};`, event.Tick, 0b1},
		{"admission", `function onValidate(req, ctx) { return req.name !== "x"; }`, event.Validate, 0b10},
		{"a property name counts as a read", `function onAdd(obj, ctx) { return obj.ctx; }`, event.Add, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile("rule.js", tt.src, CompileOptions{})
			if err != nil {
				t.Fatal(err)
			}
			i, _ := tt.typ.Index()
			if got := p.unused[i].mask; got != tt.want {
				t.Errorf("unused %03b, want %03b", got, tt.want)
			}
		})
	}
}

// TestUnusedArgsOnlyForTheDeclaredFunction: a handler is given fewer
// arguments only when the runtime calls the very function Compile
// looked at; a handler replaced at top level gets them all.
func TestUnusedArgsOnlyForTheDeclaredFunction(t *testing.T) {
	tests := []struct {
		name, src string
		skipped   bool
	}{
		{"declared", `function onUpdate(oldObj, newObj, ctx) { kreact.log(String(newObj.metadata.name)); }`, true},
		{"declared arrow", `const onUpdate = (oldObj, newObj, ctx) => kreact.log(String(newObj.metadata.name));`, true},
		{"replaced", `function onUpdate(oldObj, newObj, ctx) {}
onUpdate = function (o, n, c) { kreact.log(c.rule + " " + n.metadata.name + " " + o.metadata.name); };`, false},
		{"bound", `function handle(oldObj, newObj, ctx) { kreact.log(ctx.rule + " " + newObj.metadata.name); }
var onUpdate = handle.bind(null);`, false},
		{"replaced by another global", `function onUpdate(oldObj, newObj, ctx) {}
globalThis["on" + "Update"] = function (o, n, c) { kreact.log(c.rule + " " + n.metadata.name + " " + o.metadata.name); };`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newFakeHost()
			r := mustRuntime(t, "rule.js", tt.src, h, RuntimeOptions{Rule: "r"})
			ev := event.Event{Type: event.Update, OldObject: deployment("default", "old", 1), Object: deployment("default", "web", 1), Resource: deployments}
			if _, err := r.Call(ev); err != nil {
				t.Fatal(err)
			}
			i, _ := event.Update.Index()
			if skipped := r.env.unused[i] != 0; skipped != tt.skipped {
				t.Errorf("arguments skipped: %v, want %v", skipped, tt.skipped)
			}
			got := strings.Join(h.messages(), "\n")
			want := "r web old"
			if strings.HasPrefix(tt.name, "declared") {
				want = "web"
			} else if tt.name == "bound" {
				want = "r web"
			}
			if got != want {
				t.Errorf("logs %q, want %q", got, want)
			}
		})
	}
}
