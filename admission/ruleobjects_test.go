package admission

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
)

// TestRuleObjectResources: the webhook of rule objects names the
// resources of the rule CRDs.
func TestRuleObjectResources(t *testing.T) {
	crds, err := rules.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var plurals []string
	for _, crd := range crds {
		names := crd["spec"].(map[string]any)["names"].(map[string]any)
		plurals = append(plurals, names["plural"].(string))
	}
	if !slices.Equal(plurals, ruleObjectResources) {
		t.Errorf("the CRDs' resources are %v, the webhook's %v", plurals, ruleObjectResources)
	}
	v := RuleObjectsConfiguration(Options{Name: "kreact", URL: "https://127.0.0.1:9443"})
	w := v.Webhooks[0]
	if v.Name != "kreact-rule-objects" || w.Name != RuleObjectsWebhook || *w.ClientConfig.URL != "https://127.0.0.1:9443"+RuleObjectsPath {
		t.Errorf("configuration %s, webhook %s at %s", v.Name, w.Name, *w.ClientConfig.URL)
	}
	// kreact down must not block applies.
	if *w.FailurePolicy != admregv1.Ignore {
		t.Errorf("failure policy %s, want Ignore", *w.FailurePolicy)
	}
	if ops := w.Rules[0].Operations; !slices.Equal(ops, []admregv1.OperationType{admregv1.Create, admregv1.Update}) {
		t.Errorf("operations %v, want CREATE and UPDATE", ops)
	}
}

// checkerOf is a RuleObjectChecker that answers problems, and records
// the objects it is asked about.
func checkerOf(problems diag.ErrorList, err error, asked *[]map[string]any) RuleObjectChecker {
	return func(_ context.Context, content map[string]any) (diag.ErrorList, error) {
		*asked = append(*asked, content)
		return problems, err
	}
}

func ruleObjectRequest(t *testing.T, op admissionv1.Operation, obj, old map[string]any) *admissionv1.AdmissionRequest {
	t.Helper()
	raw := func(v map[string]any) []byte {
		if v == nil {
			return nil
		}
		data, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	return &admissionv1.AdmissionRequest{
		UID:       "uid-r",
		Kind:      metav1.GroupVersionKind{Group: rules.Group, Version: rules.Version, Kind: rules.Kind},
		Resource:  metav1.GroupVersionResource{Group: rules.Group, Version: rules.Version, Resource: "rules"},
		Name:      "r",
		Namespace: "team-a",
		Operation: op,
		Object:    runtime.RawExtension{Raw: raw(obj)},
		OldObject: runtime.RawExtension{Raw: raw(old)},
	}
}

func ruleObject(workers int, labels map[string]any, deleting bool) map[string]any {
	md := map[string]any{"name": "r", "labels": labels}
	if deleting {
		md["deletionTimestamp"] = "2026-11-29T08:00:00Z"
	}
	return map[string]any{"apiVersion": rules.APIVersion, "kind": rules.Kind, "metadata": md,
		"spec": map[string]any{"watch": []any{map[string]any{"resource": "configmaps"}}, "workers": workers, "script": "x"}}
}

func newRuleObjectServer(t *testing.T, check RuleObjectChecker) *Server {
	t.Helper()
	certs, err := GenerateCertificates([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewServer(ServerOptions{Addr: "127.0.0.1:0", Certificates: func(context.Context) (*Certificates, error) { return certs, nil },
		Mapper: restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{}), RuleObjects: check})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s
}

// TestReviewRuleObject: errors refuse a rule object with every one of
// them, one a line; warnings come back with the answer; an update that
// leaves the rule as it says, or of a rule being deleted, is not
// checked; a check that fails admits.
func TestReviewRuleObject(t *testing.T) {
	problems := diag.ErrorList{
		{Pos: diag.Position{File: "rule/team-a/r"}, Msg: "spec.watch[0].resource: no such resource"},
		{Pos: diag.Position{File: "rule/team-a/r: spec.script", Line: 2, Col: 5}, Msg: "script: Unexpected identifier"},
		{Pos: diag.Position{File: "rule/team-a/r"}, Msg: "onUpdate is never called", Warning: true},
	}
	var asked []map[string]any
	s := newRuleObjectServer(t, checkerOf(problems, nil, &asked))

	resp := review(t, s, RuleObjectsPath, ruleObjectRequest(t, admissionv1.Create, ruleObject(1, nil, false), nil))
	want := "2 errors (kreact validate):\nrule/team-a/r: spec.watch[0].resource: no such resource\nrule/team-a/r: spec.script:2:5: script: Unexpected identifier"
	if resp.Allowed || resp.Result == nil || resp.Result.Message != want || resp.Result.Code != 422 {
		t.Errorf("a broken rule: %+v\nwant refused with\n%s", resp, want)
	}
	if !slices.Equal(resp.Warnings, []string{"rule/team-a/r: warning: onUpdate is never called"}) {
		t.Errorf("warnings %q", resp.Warnings)
	}
	// The namespace of the request, where the object has none.
	if len(asked) != 1 || asked[0]["metadata"].(map[string]any)["namespace"] != "team-a" {
		t.Errorf("checked %v, want the object in team-a", asked)
	}

	for _, tc := range []struct {
		name     string
		req      *admissionv1.AdmissionRequest
		checked  bool
		admitted bool
	}{
		{"an update of the spec", ruleObjectRequest(t, admissionv1.Update, ruleObject(2, nil, false), ruleObject(1, nil, false)), true, false},
		{"an update of a label", ruleObjectRequest(t, admissionv1.Update, ruleObject(1, map[string]any{"a": "b"}, false), ruleObject(1, nil, false)), false, true},
		{"a change of a rule being deleted", ruleObjectRequest(t, admissionv1.Update, ruleObject(2, nil, true), ruleObject(1, nil, true)), false, true},
		{"a delete", ruleObjectRequest(t, admissionv1.Delete, nil, ruleObject(1, nil, false)), false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked = nil
			resp := review(t, s, RuleObjectsPath, tc.req)
			if resp.Allowed != tc.admitted || (len(asked) > 0) != tc.checked {
				t.Errorf("allowed %v, checked %v; want %v, %v", resp.Allowed, len(asked) > 0, tc.admitted, tc.checked)
			}
		})
	}

	failing := newRuleObjectServer(t, checkerOf(nil, errors.New("context canceled"), &asked))
	resp = review(t, failing, RuleObjectsPath, ruleObjectRequest(t, admissionv1.Create, ruleObject(1, nil, false), nil))
	if !resp.Allowed || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], "context canceled") {
		t.Errorf("a failed check: %+v, want admitted with a warning", resp)
	}
	// Without a checker, rule objects are the schema's.
	none := newRuleObjectServer(t, nil)
	if resp := review(t, none, RuleObjectsPath, ruleObjectRequest(t, admissionv1.Create, ruleObject(1, nil, false), nil)); !resp.Allowed {
		t.Errorf("no checker: %+v", resp)
	}
}

// TestServerListensForRuleObjects: with RuleObjects, the server listens
// and applies the configuration of rule objects from the start, with no
// rule loaded.
func TestServerListensForRuleObjects(t *testing.T) {
	certs, err := GenerateCertificates([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	app := &recordingApplier{}
	var asked []map[string]any
	s, err := NewServer(ServerOptions{Addr: "127.0.0.1:0", Certificates: func(context.Context) (*Certificates, error) { return certs, nil },
		Applier: app, Mapper: restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{}), RuleObjects: checkerOf(nil, nil, &asked)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- s.Start(ctx) }()
	<-s.listening
	deadline := time.Now().Add(time.Minute)
	for {
		app.mu.Lock()
		applied := slices.Clone(app.applied)
		app.mu.Unlock()
		if slices.Equal(applied, []string{"validate " + RuleObjectsWebhook}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("applied %v, want the webhook of rule objects", applied)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if s.Addr() == nil {
		t.Error("the server does not listen")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
