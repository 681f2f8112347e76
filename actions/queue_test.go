//go:build e2e

package actions_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/internal/testcluster"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

var (
	configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	namespaces = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
)

// startQueue runs a queue until the test ends and returns it with a log of
// results.
func startQueue(t *testing.T, opts actions.Options) (*actions.Queue, *results) {
	t.Helper()
	res := &results{}
	opts.OnResult = res.add
	if opts.BaseDelay == 0 {
		opts.BaseDelay = 10 * time.Millisecond
	}
	if opts.MaxDelay == 0 {
		opts.MaxDelay = 200 * time.Millisecond
	}
	rc, err := clientstack.RESTClient(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	q := actions.NewQueue(rc, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = q.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return q, res
}

func createNamespace(t *testing.T, name string) {
	t.Helper()
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
	if _, err := dyn.Resource(namespaces).Create(t.Context(), ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
}

func configMap(ns, name string, data map[string]any) map[string]any {
	return map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"data":     data,
	}
}

func getConfigMap(t *testing.T, ns, name string) (*unstructured.Unstructured, error) {
	return dynamic.NewForConfigOrDie(cluster.Config()).Resource(configMaps).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
}

func TestEveryVerbReachesTheServer(t *testing.T) {
	createNamespace(t, "verbs")
	q, res := startQueue(t, actions.Options{Name: "verbs"})
	cm := func(verb actions.Verb, name string) actions.Action {
		return actions.Action{Rule: "test", Verb: verb, Resource: configMaps, Kind: "ConfigMap", APIVersion: "v1", Namespaced: true, Namespace: "verbs", Name: name}
	}
	create := cm(actions.Create, "created")
	create.Object = configMap("verbs", "created", map[string]any{"a": "1"})
	apply := cm(actions.Apply, "applied")
	apply.Object = configMap("verbs", "applied", map[string]any{"b": "2"})
	merge := cm(actions.Patch, "created")
	merge.PatchType, merge.PatchData = types.MergePatchType, []byte(`{"data":{"merged":"yes"}}`)
	jsonPatch := cm(actions.Patch, "created")
	jsonPatch.PatchType, jsonPatch.PatchData = types.JSONPatchType, []byte(`[{"op":"add","path":"/data/json","value":"yes"}]`)
	event := cm(actions.Event, "created")
	event.EventType, event.Reason, event.Message = "Normal", "Tested", "kreact was here"
	for _, a := range []actions.Action{create, apply, merge, jsonPatch, event} {
		q.Enqueue(a)
	}
	testcluster.Eventually(t, "five actions to succeed", func() bool { return res.count(actions.Succeeded) == 5 })

	got, err := getConfigMap(t, "verbs", "created")
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedStringMap(got.Object, "data")
	if data["a"] != "1" || data["merged"] != "yes" || data["json"] != "yes" {
		t.Errorf("created configmap data = %v, want a, merged and json", data)
	}
	applied, err := getConfigMap(t, "verbs", "applied")
	if err != nil {
		t.Fatal(err)
	}
	if mf := applied.GetManagedFields(); len(mf) == 0 || mf[0].Manager != actions.FieldManager || mf[0].Operation != metav1.ManagedFieldsOperationApply {
		t.Errorf("applied configmap managed fields = %+v, want an Apply by %q", mf, actions.FieldManager)
	}
	events, err := dynamic.NewForConfigOrDie(cluster.Config()).Resource(schema.GroupVersionResource{Version: "v1", Resource: "events"}).Namespace("verbs").List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=created"})
	if err != nil {
		t.Fatal(err)
	}
	if len(events.Items) != 1 || events.Items[0].Object["reason"] != "Tested" {
		t.Errorf("events about the configmap = %d, want one with reason Tested", len(events.Items))
	}

	q.Enqueue(cm(actions.Delete, "created"))
	q.Enqueue(cm(actions.Delete, "created")) // deleting what is gone is done, not an error
	testcluster.Eventually(t, "deletes to succeed", func() bool { return res.count(actions.Succeeded) == 7 })
	if _, err := getConfigMap(t, "verbs", "created"); !apierrors.IsNotFound(err) {
		t.Errorf("get deleted configmap: %v, want NotFound", err)
	}
}

func TestActionsOnOneObjectRunInOrder(t *testing.T) {
	createNamespace(t, "order")
	q, res := startQueue(t, actions.Options{Name: "order", Workers: 4, RateLimit: -1})
	create := actions.Action{Verb: actions.Create, Resource: configMaps, Namespace: "order", Name: "seq", Object: configMap("order", "seq", map[string]any{"log": ""})}
	q.Enqueue(create)
	const n = 30
	for i := range n {
		// Each JSON patch checks the previous value, so any reordering fails
		// the "test" operation and shows up as a failed action.
		prev := ""
		if i > 0 {
			prev = fmt.Sprint(i - 1)
		}
		patch := fmt.Sprintf(`[{"op":"test","path":"/data/log","value":%q},{"op":"replace","path":"/data/log","value":"%d"}]`, prev, i)
		q.Enqueue(actions.Action{Verb: actions.Patch, Resource: configMaps, Namespace: "order", Name: "seq", PatchType: types.JSONPatchType, PatchData: []byte(patch)})
	}
	testcluster.Eventually(t, "all patches to finish", func() bool {
		return res.count(actions.Succeeded)+res.count(actions.Failed)+res.count(actions.GaveUp) == n+1
	})
	if f := res.count(actions.Failed) + res.count(actions.GaveUp); f != 0 {
		t.Fatalf("%d actions failed: order not kept", f)
	}
	got, err := getConfigMap(t, "order", "seq")
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(got.Object, "data", "log"); v != fmt.Sprint(n-1) {
		t.Errorf("data.log = %q, want %d", v, n-1)
	}
}

func TestDryRunChangesNothing(t *testing.T) {
	createNamespace(t, "dryrun")
	q, res := startQueue(t, actions.Options{Name: "dryrun", DryRun: true})
	q.Enqueue(actions.Action{Verb: actions.Create, Resource: configMaps, Namespace: "dryrun", Name: "ghost", Object: configMap("dryrun", "ghost", nil)})
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { hits.Add(1) }))
	defer srv.Close()
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: srv.URL}})
	testcluster.Eventually(t, "dry-run actions to succeed", func() bool { return res.count(actions.Succeeded) == 2 })
	if _, err := getConfigMap(t, "dryrun", "ghost"); !apierrors.IsNotFound(err) {
		t.Errorf("dry-run create left an object behind: %v", err)
	}
	if hits.Load() != 0 {
		t.Errorf("dry-run HTTP action reached the server %d times", hits.Load())
	}
}

func TestFailuresAreCountedAndDoNotBlockOthers(t *testing.T) {
	createNamespace(t, "failures")
	var calls atomic.Int32
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.Error(w, "boom", http.StatusInternalServerError)
	}))
	defer broken.Close()
	q, res := startQueue(t, actions.Options{Name: "failures", Retries: 3})
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{URL: broken.URL}})
	// A patch on a missing object is refused for good.
	q.Enqueue(actions.Action{Verb: actions.Patch, Resource: configMaps, Namespace: "failures", Name: "missing", PatchType: types.MergePatchType, PatchData: []byte(`{}`)})
	q.Enqueue(actions.Action{Verb: actions.Create, Resource: configMaps, Namespace: "failures", Name: "fine", Object: configMap("failures", "fine", nil)})

	testcluster.Eventually(t, "the HTTP action to give up", func() bool { return res.count(actions.GaveUp) == 1 })
	testcluster.Eventually(t, "the other actions to finish", func() bool { return res.count(actions.Failed) == 1 && res.count(actions.Succeeded) == 1 })
	if got := calls.Load(); got != 4 {
		t.Errorf("broken endpoint called %d times, want 1 + 3 retries", got)
	}
	st := q.Stats()
	if st.GaveUp != 1 || st.Failed != 1 || st.Succeeded != 1 || st.Retried != 3 {
		t.Errorf("stats = %+v, want 1 gave up, 1 failed, 1 succeeded, 3 retried", st)
	}
}

// kreact's own patches test the object's state first (Action.Guarded):
// a refusal because another client changed the object is expected, and
// is made again by whoever asked, so it is no error in the log. The same
// refusal of a script's patch still is.
func TestGuardedPatchRefusalIsNoError(t *testing.T) {
	createNamespace(t, "guarded")
	var logs testcluster.LogBuffer
	q, res := startQueue(t, actions.Options{Name: "guarded", Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	q.Enqueue(actions.Action{Verb: actions.Create, Resource: configMaps, Namespace: "guarded", Name: "cm", Object: configMap("guarded", "cm", map[string]any{"v": "1"})})
	testcluster.Eventually(t, "the ConfigMap to be created", func() bool { return res.count(actions.Succeeded) == 1 })
	stale := []byte(`[{"op":"test","path":"/data/v","value":"0"},{"op":"replace","path":"/data/v","value":"2"}]`)
	for _, guarded := range []bool{true, false} {
		q.Enqueue(actions.Action{Verb: actions.Patch, Resource: configMaps, Namespace: "guarded", Name: "cm", PatchType: types.JSONPatchType, PatchData: stale, Guarded: guarded})
	}
	testcluster.Eventually(t, "both patches to be refused", func() bool { return res.count(actions.Failed) == 2 })
	if got := logs.Count("level=ERROR msg=\"action refused\""); got != 1 {
		t.Errorf("%d errors logged, want 1 (the unguarded patch):\n%s", got, logs.String())
	}
	if got := logs.Count("level=INFO msg=\"kreact's own patch found the object changed meanwhile"); got != 1 {
		t.Errorf("the guarded patch's refusal logged %d times at INFO, want 1:\n%s", got, logs.String())
	}
}

func TestAPIServerOutageLosesNoAction(t *testing.T) {
	createNamespace(t, "outage")
	q, res := startQueue(t, actions.Options{Name: "outage", Retries: 1})
	if err := cluster.StopAPIServer(); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		name := fmt.Sprintf("after-outage-%d", i)
		q.Enqueue(actions.Action{Verb: actions.Create, Resource: configMaps, Namespace: "outage", Name: name, Object: configMap("outage", name, nil)})
	}
	testcluster.Eventually(t, "actions to wait for the server", func() bool { return res.count(actions.Waiting) >= 5 })
	if err := cluster.StartAPIServer(); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "all actions to succeed after the restart", func() bool { return res.count(actions.Succeeded) == 5 })
	for i := range 5 {
		if _, err := getConfigMap(t, "outage", fmt.Sprintf("after-outage-%d", i)); err != nil {
			t.Errorf("configmap %d: %v", i, err)
		}
	}
	if st := q.Stats(); st.GaveUp != 0 || st.Failed != 0 {
		t.Errorf("stats = %+v, want nothing given up or failed", st)
	}
}

func TestHTTPActionSendsTheRequest(t *testing.T) {
	got := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		got <- r.Method + " " + r.Header.Get("Content-Type") + " " + string(body)
	}))
	defer srv.Close()
	q, _ := startQueue(t, actions.Options{Name: "http"})
	q.Enqueue(actions.Action{Verb: actions.HTTP, Request: &actions.HTTPRequest{
		Method: "POST", URL: srv.URL, Headers: map[string]string{"Content-Type": "application/json"}, Body: []byte(`{"text":"hi"}`),
	}})
	select {
	case req := <-got:
		if want := `POST application/json {"text":"hi"}`; req != want {
			t.Errorf("request = %q, want %q", req, want)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("HTTP action never arrived")
	}
}

func TestPatchStatusSubresource(t *testing.T) {
	ctx := t.Context()
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	crd := testcluster.CRD{Group: "actions.kreact.dev", Kind: "Job", Plural: "jobs"}
	if err := testcluster.CreateCRD(ctx, dyn, crd); err != nil {
		t.Fatal(err)
	}
	createNamespace(t, "status")
	jobs := dyn.Resource(crd.GVR()).Namespace("status")
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "actions.kreact.dev/v1", "kind": "Job", "metadata": map[string]any{"name": "j"}}}
	testcluster.Eventually(t, "the custom resource to be creatable", func() bool {
		_, err := jobs.Create(ctx, obj, metav1.CreateOptions{})
		return err == nil || apierrors.IsAlreadyExists(err)
	})
	q, res := startQueue(t, actions.Options{Name: "status"})
	q.Enqueue(actions.Action{Verb: actions.Patch, Resource: crd.GVR(), Namespace: "status", Name: "j", Subresource: "status",
		PatchType: types.MergePatchType, PatchData: []byte(`{"status":{"phase":"Done"},"spec":{"ignored":true}}`)})
	testcluster.Eventually(t, "the status patch to succeed", func() bool { return res.count(actions.Succeeded) == 1 })
	got, err := jobs.Get(ctx, "j", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if phase, _, _ := unstructured.NestedString(got.Object, "status", "phase"); phase != "Done" {
		t.Errorf("status.phase = %q, want Done", phase)
	}
	if _, found, _ := unstructured.NestedFieldNoCopy(got.Object, "spec", "ignored"); found {
		t.Error("a status patch changed spec")
	}
}
