package scripting

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kreact/kreact/event"
)

func admissionEvent(t event.Type, op string) event.Event {
	ev := event.Event{
		Type:     t,
		Object:   deployment("default", "web", 2),
		Resource: deployments,
		Admission: &event.AdmissionRequest{
			Operation: op, Namespace: "default", Name: "web", DryRun: true,
			UserInfo: map[string]any{"username": "alice", "groups": []any{"dev"}},
		},
	}
	if op == "UPDATE" {
		ev.OldObject = deployment("default", "web", 1)
	}
	return ev
}

func TestAdmissionRequest(t *testing.T) {
	src := `function onValidate(req, ctx) {
  const seen = [req.operation, req.name, req.namespace, req.resource, req.subResource, req.dryRun,
    req.userInfo.username, req.userInfo.groups[0], req.object.spec.replicas, req.oldObject.spec.replicas,
    ctx.event, ctx.rule, Object.keys(req).join(",")];
  try { req.operation = "x"; } catch (e) { seen.push(e.name); }
  try { req.object.spec.replicas = 5; } catch (e) { seen.push(e.name); }
  return seen.join(" ");
}`
	r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{Rule: "r"})
	out, err := r.Invoke(admissionEvent(event.Validate, "UPDATE"))
	if err != nil {
		t.Fatal(err)
	}
	want := "UPDATE web default deployments.apps  true alice dev 2 1 validate r " +
		"operation,name,namespace,resource,subResource,object,oldObject,dryRun,userInfo TypeError TypeError"
	if !out.Verdict.Denied || out.Verdict.Message != want {
		t.Errorf("Verdict = %+v, want denied with\n%q", out.Verdict, want)
	}
}

func TestValidateVerdict(t *testing.T) {
	tests := []struct {
		name, body string
		want       event.Verdict
		err        string
	}{
		{"nothing allows", `return;`, event.Verdict{}, ""},
		{"null allows", `return null;`, event.Verdict{}, ""},
		{"true allows", `return true;`, event.Verdict{}, ""},
		{"message denies", `return "needs an owner label";`, event.Verdict{Denied: true, Message: "needs an owner label"}, ""},
		{"async message denies", `return Promise.resolve("later");`, event.Verdict{Denied: true, Message: "later"}, ""},
		{"false is an error", `return false;`, event.Verdict{}, "onValidate returned bool false: return a message to deny"},
		{"empty string is an error", `return "";`, event.Verdict{}, "onValidate returned an empty string"},
		{"object is an error", `return {allowed: false};`, event.Verdict{}, "onValidate returned an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRuntime(t, "rule.js", "function onValidate(req, ctx) {\n  "+tt.body+"\n}", newFakeHost(), RuntimeOptions{Rule: "r"})
			out, err := r.Invoke(admissionEvent(event.Validate, "CREATE"))
			if tt.err != "" {
				var se *event.ScriptError
				if !errors.As(err, &se) || !strings.Contains(se.Message, tt.err) {
					t.Fatalf("Invoke = %v, want a ScriptError with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out.Verdict, tt.want) {
				t.Errorf("Verdict = %+v, want %+v", out.Verdict, tt.want)
			}
		})
	}
}

func TestMutateVerdict(t *testing.T) {
	tests := []struct {
		name, body string
		want       any
		err        string
	}{
		{"nothing", `return;`, nil, ""},
		{"merge patch", `return {metadata: {labels: {team: "web"}}};`, map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "web"}}}, ""},
		{"json patch", `return [{op: "add", path: "/metadata/labels", value: {}}];`, []any{map[string]any{"op": "add", "path": "/metadata/labels", "value": map[string]any{}}}, ""},
		{"not JSON", `return {spec: {replicas: NaN}};`, nil, "onMutate: spec.replicas is NaN"},
		{"a string", `return "x";`, nil, "onMutate returned string x: return a JSON merge patch"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRuntime(t, "rule.js", "function onMutate(req, ctx) {\n  "+tt.body+"\n}", newFakeHost(), RuntimeOptions{Rule: "r"})
			out, err := r.Invoke(admissionEvent(event.Mutate, "CREATE"))
			if tt.err != "" {
				var se *event.ScriptError
				if !errors.As(err, &se) || !strings.Contains(se.Message, tt.err) {
					t.Fatalf("Invoke = %v, want a ScriptError with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out.Verdict.Change, tt.want) {
				t.Errorf("Change = %#v, want %#v", out.Verdict.Change, tt.want)
			}
		})
	}
}

// TestAdmissionHandlersQueueNothing checks that every function that
// queues an action or a timer throws in an admission handler, at the
// call, before looking at its arguments, while reads are allowed.
func TestAdmissionHandlersQueueNothing(t *testing.T) {
	for _, call := range []string{
		`kreact.create(req.object)`,
		`kreact.apply(req.object)`,
		`kreact.patch(req.object, {})`,
		`kreact.jsonPatch(req.object, [])`,
		`kreact.delete(req.object)`,
		`kreact.event(req.object, {reason: "X"})`,
		`kreact.http({url: "https://example.com"})`,
		`kreact.after(req.object, "1m")`,
		`kreact.patch()`,
	} {
		for _, h := range []event.Type{event.Validate, event.Mutate} {
			t.Run(h.Handler()+"/"+call, func(t *testing.T) {
				src := "function " + h.Handler() + "(req, ctx) {\n  kreact.get(\"deploy\", \"default\", \"web\");\n  " + call + ";\n}\nfunction onTimer() {}"
				host := newFakeHost()
				r := mustRuntime(t, "rule.js", src, host, RuntimeOptions{Rule: "r"})
				_, err := r.Invoke(admissionEvent(h, "CREATE"))
				var se *event.ScriptError
				if !errors.As(err, &se) || !errors.Is(err, errAdmissionSideEffect) {
					t.Fatalf("Invoke = %v, want the side-effect error", err)
				}
				op := call[len("kreact."):strings.IndexByte(call, '(')]
				if want := "Error: " + op + " in " + h.Handler() + ": admission handlers cannot queue actions"; !strings.HasPrefix(se.Message, want) {
					t.Errorf("Message = %q, want it to start with %q", se.Message, want)
				}
				if se.Position.Line != 3 {
					t.Errorf("Position = %v, want line 3 (the call)", se.Position)
				}
				if len(host.recorded()) != 0 {
					t.Errorf("host permitted %v", host.recorded())
				}
			})
		}
	}
}

func TestAdmissionHandlersDeclared(t *testing.T) {
	p, err := Compile("rule.js", "export function onValidate(req) {}\nconst onMutate = (req) => undefined;", CompileOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !p.HasHandler(event.Validate) || !p.HasHandler(event.Mutate) || p.HasHandler(event.Add) {
		t.Errorf("HasHandler: validate %v, mutate %v, add %v", p.HasHandler(event.Validate), p.HasHandler(event.Mutate), p.HasHandler(event.Add))
	}
	if _, err := Compile("rule.js", "var onValidate = 5;", CompileOptions{}); err == nil || !strings.Contains(err.Error(), "onValidate is declared but is not a function") {
		t.Errorf("Compile = %v, want onValidate is not a function", err)
	}
}

// TestKeptRequestShowsItsOwnCall: a script that keeps req sees the
// request of the call it was given to, not the next one's.
func TestKeptRequestShowsItsOwnCall(t *testing.T) {
	src := `let kept;
function onValidate(req, ctx) {
  if (!kept) { kept = req; return; }
  return kept.operation + " " + kept.object.spec.replicas + " " + kept.userInfo.username;
}`
	r := mustRuntime(t, "rule.js", src, newFakeHost(), RuntimeOptions{})
	if _, err := r.Invoke(admissionEvent(event.Validate, "UPDATE")); err != nil {
		t.Fatal(err)
	}
	second := admissionEvent(event.Validate, "CREATE")
	second.Object = deployment("default", "web", 7)
	second.Admission.UserInfo = map[string]any{"username": "bob"}
	out, err := r.Invoke(second)
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict.Message != "UPDATE 2 alice" {
		t.Errorf("the kept request shows %q, want its own call's: UPDATE 2 alice", out.Verdict.Message)
	}
}
