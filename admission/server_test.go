package admission

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
)

// recordingApplier records what the server applies: the API server's
// side is tested end to end (e2e_test.go).
type recordingApplier struct {
	mu      sync.Mutex
	applied []string // webhook names of the last Apply
	deleted int
}

func (a *recordingApplier) Apply(_ context.Context, v *admregv1.ValidatingWebhookConfiguration, m *admregv1.MutatingWebhookConfiguration) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied = nil
	for _, w := range v.Webhooks {
		a.applied = append(a.applied, "validate "+w.Name)
	}
	if m != nil {
		for _, w := range m.Webhooks {
			a.applied = append(a.applied, "mutate "+w.Name)
		}
	}
	return nil
}

func (a *recordingApplier) Delete(context.Context, string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.applied = nil
	a.deleted++
	return nil
}

func newTestServer(t *testing.T, files map[string]string) (*Server, *recordingApplier, string) {
	t.Helper()
	dir := t.TempDir()
	writeRules(t, dir, files)
	certs, err := GenerateCertificates([]string{"127.0.0.1"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	app := &recordingApplier{}
	s, err := NewServer(ServerOptions{
		Addr:         "127.0.0.1:0",
		Certificates: func(context.Context) (*Certificates, error) { return certs, nil },
		Applier:      app,
		Mapper:       restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{}),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.stop)
	return s, app, dir
}

func writeRules(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, data := range files {
		path := filepath.Join(dir, name)
		if data == "" {
			_ = os.Remove(path)
			continue
		}
		if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func load(t *testing.T, s *Server, dir string) error {
	t.Helper()
	rs, _, err := rules.LoadEach(dir)
	if err != nil {
		t.Fatal(err)
	}
	return s.Load(t.Context(), rs)
}

const ruleHead = "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata:\n  name: "

const ownerRule = ruleHead + `owner-label
spec:
  watch: [{resource: configmaps}]
  events: [add, update]
  script: |
    function onValidate(req, ctx) {
      if (!req.object.metadata.labels?.owner) return "needs an owner label (" + req.userInfo.username + ")";
    }
    function onMutate(req, ctx) {
      if (req.operation === "CREATE") return {metadata: {labels: {"defaulted": "yes"}}};
    }
`

func review(t *testing.T, s *Server, path string, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	t.Helper()
	body, err := json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request:  req,
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)))
	if rec.Code != http.StatusOK {
		t.Fatalf("POST %s: %d %s", path, rec.Code, rec.Body)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if out.Response == nil || out.Response.UID != req.UID || out.Kind != "AdmissionReview" {
		t.Fatalf("response %+v does not answer request %s", out, req.UID)
	}
	return out.Response
}

func configMapRequest(op admissionv1.Operation, labels map[string]string) *admissionv1.AdmissionRequest {
	obj, _ := json.Marshal(map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "cm", "namespace": "default", "labels": labels},
	})
	return &admissionv1.AdmissionRequest{
		UID:       "uid-1",
		Kind:      metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
		Resource:  metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
		Name:      "cm",
		Namespace: "default",
		Operation: op,
		UserInfo:  authenticationv1.UserInfo{Username: "alice"},
		Object:    runtime.RawExtension{Raw: obj},
	}
}

func TestServerReviews(t *testing.T) {
	s, app, dir := newTestServer(t, map[string]string{"owner.yaml": ownerRule})
	if err := load(t, s, dir); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(app.applied, ","); got != "validate owner-label.kreact.dev,mutate owner-label.kreact.dev" {
		t.Errorf("applied %s", got)
	}
	if s.Addr() == nil {
		t.Error("the server does not listen with a rule with admission handlers loaded")
	}

	resp := review(t, s, "/validate/owner-label", configMapRequest(admissionv1.Create, nil))
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 403 || resp.Result.Message != "rule owner-label: needs an owner label (alice)" {
		t.Errorf("unlabelled: %+v", resp)
	}
	resp = review(t, s, "/validate/owner-label", configMapRequest(admissionv1.Create, map[string]string{"owner": "x"}))
	if !resp.Allowed || resp.Result != nil {
		t.Errorf("labelled: %+v", resp)
	}
	resp = review(t, s, "/mutate/owner-label", configMapRequest(admissionv1.Create, map[string]string{"owner": "x"}))
	if !resp.Allowed || resp.PatchType == nil || *resp.PatchType != admissionv1.PatchTypeJSONPatch ||
		string(resp.Patch) != `[{"op":"add","path":"/metadata/labels/defaulted","value":"yes"}]` {
		t.Errorf("mutate: %+v (patch %s)", resp, resp.Patch)
	}
	resp = review(t, s, "/mutate/owner-label", configMapRequest(admissionv1.Update, nil))
	if !resp.Allowed || resp.Patch != nil {
		t.Errorf("mutate of an update: %+v", resp)
	}
	// A rule that is not (or no longer) served lets everything through.
	resp = review(t, s, "/validate/nosuch", configMapRequest(admissionv1.Create, nil))
	if !resp.Allowed {
		t.Errorf("unknown rule: %+v", resp)
	}
}

func TestServerAuditAndFailurePolicy(t *testing.T) {
	s, _, dir := newTestServer(t, map[string]string{
		"audit.yaml": ruleHead + `audited
spec:
  watch: [{resource: configmaps}]
  admission: {mode: audit, failurePolicy: Fail}
  script: |
    function onValidate(req) { return "would be refused"; }
    function onMutate(req) { return {data: {x: "y"}}; }
`,
		"throws.yaml": ruleHead + `throws
spec:
  watch: [{resource: configmaps}]
  admission: {failurePolicy: Fail}
  script: |
    function onValidate(req) { throw new Error("boom"); }
    function onMutate(req) { return {metadata: {name: "renamed"}}; }
`,
		"ignores.yaml": ruleHead + `ignores
spec:
  watch: [{resource: configmaps}]
  script: |
    function onValidate(req) { for (;;) {} }
`,
	})
	if err := load(t, s, dir); err != nil {
		t.Fatal(err)
	}
	req := configMapRequest(admissionv1.Create, nil)
	resp := review(t, s, "/validate/audited", req)
	if !resp.Allowed || resp.Result != nil || len(resp.Warnings) != 1 || resp.Warnings[0] != "audit: rule audited: would be refused" {
		t.Errorf("audit validate: %+v", resp)
	}
	resp = review(t, s, "/mutate/audited", req)
	if !resp.Allowed || resp.Patch != nil || len(resp.Warnings) != 1 || !strings.Contains(resp.Warnings[0], `would change the object: [{"op":"add","path":"/data","value":{"x":"y"}}]`) {
		t.Errorf("audit mutate: %+v", resp)
	}
	resp = review(t, s, "/validate/throws", req)
	if resp.Allowed || resp.Result == nil || resp.Result.Code != 500 || !strings.Contains(resp.Result.Message, "rule throws: onValidate: ") || !strings.Contains(resp.Result.Message, "Error: boom") {
		t.Errorf("throw with Fail: %+v", resp)
	}
	resp = review(t, s, "/mutate/throws", req)
	if resp.Allowed || resp.Result == nil || !strings.Contains(resp.Result.Message, "may not alter metadata.name") {
		t.Errorf("rename with Fail: %+v", resp)
	}
	resp = review(t, s, "/validate/ignores", req)
	if !resp.Allowed || resp.Result != nil {
		t.Errorf("timeout with Ignore: %+v", resp)
	}
}

func TestServerReload(t *testing.T) {
	s, app, dir := newTestServer(t, map[string]string{"owner.yaml": ownerRule})
	if err := load(t, s, dir); err != nil {
		t.Fatal(err)
	}
	writeRules(t, dir, map[string]string{"owner.yaml": "", "plain.yaml": ruleHead + "plain\nspec:\n  watch: [{resource: configmaps}]\n  script: 'function onAdd() {}'\n"})
	if err := load(t, s, dir); err != nil {
		t.Fatal(err)
	}
	if app.applied != nil || app.deleted != 1 {
		t.Errorf("after the rule went: applied %v, deleted %d times; want the configurations deleted", app.applied, app.deleted)
	}
	resp := review(t, s, "/validate/owner-label", configMapRequest(admissionv1.Create, nil))
	if !resp.Allowed {
		t.Errorf("a removed rule still denies: %+v", resp)
	}
}

func TestServerStaysOffWithoutAdmissionHandlers(t *testing.T) {
	s, app, dir := newTestServer(t, map[string]string{"plain.yaml": ruleHead + "plain\nspec:\n  watch: [{resource: configmaps}]\n  script: 'function onAdd() {}'\n"})
	if err := load(t, s, dir); err != nil {
		t.Fatal(err)
	}
	if s.Addr() != nil || app.applied != nil || app.deleted != 0 {
		t.Errorf("listening on %v, applied %v, deleted %d; want nothing", s.Addr(), app.applied, app.deleted)
	}
}

// A replica without an admission server, and a server without rules
// that read caches, are ready.
func TestReadyWithoutCaches(t *testing.T) {
	var none *Server
	if err := none.Ready(); err != nil {
		t.Errorf("nil server: Ready = %v", err)
	}
	s, _, _ := newTestServer(t, nil)
	if err := s.Ready(); err != nil {
		t.Errorf("server without rules: Ready = %v", err)
	}
}
