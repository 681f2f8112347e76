//go:build e2e

package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/internal/testcluster"
)

// TestExplain: kreact explain asks a running kreact why its rules stayed
// silent on an object or failed on it, and each answer names the cause,
// its position in the rule file and the fix: a label value in another
// case, a misspelt namespace, an ignored path that swallowed an
// annotation edit, a call given up after its retries, an action the rule
// has no permission for.
func TestExplain(t *testing.T) {
	const ns = "explain-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ensureNamespace(t, dyn, ns)
	dir := t.TempDir()
	writeRule(t, dir, "silent.yaml", `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: by-label
spec:
  watch:
    - resource: configmaps
      namespaces: [explain-e2e]
      labelSelector: app=web
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {labels: {seen: "by-label"}}});
    }
---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: by-namespace
spec:
  watch:
    - resource: configmaps
      namespaces: [explaine2e]
  script: |
    function onAdd(obj, ctx) {}
---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: on-annotation
spec:
  watch:
    - resource: configmaps
      namespaces: [explain-e2e]
  events: [update]
  ignoreChanges: [metadata]
  script: |
    function onUpdate(oldObj, obj, ctx) {}
---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: thrower
spec:
  watch:
    - resource: configmaps
      namespaces: [explain-e2e]
  retries: 1
  script: |
    function onAdd(obj, ctx) {
      throw new Error("boom on " + obj.metadata.name);
    }
---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: sneaky
spec:
  watch:
    - resource: configmaps
      namespaces: [explain-e2e]
  retries: 0
  script: |
    function onAdd(obj, ctx) {
      kreact.delete(obj);
    }
`)
	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--explain-address", addr)
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })

	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "web", "namespace": ns, "labels": map[string]any{"app": "Web"}}}}
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the thrower to give up", func() bool {
		_, out, _ := run(t, "explain", "cm", "web", "-n", ns, "--address", addr)
		return strings.Contains(out, "given up after 1 retries")
	})
	patch := []byte(`{"metadata":{"annotations":{"restartedAt":"now"}}}`)
	if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Patch(t.Context(), "web", "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	var out string
	testcluster.Eventually(t, "the annotation edit to be ignored", func() bool {
		_, out, _ = run(t, "explain", "configmaps", "web", "-n", ns, "--address", addr)
		return strings.Contains(out, "update: ignored")
	})
	file := dir + "/silent.yaml"
	for _, want := range []string{
		"rule by-label (" + file + ":4:9): not watched",
		`label selector "app=web" of spec.watch[0].labelSelector (` + file + `:9:22) does not match the object's labels app=Web: app=web fails; label values are case-sensitive: the object has app=Web, the selector wants app=web`,
		`namespace "explain-e2e" is not in spec.watch[0].namespaces [explaine2e] (` + file + `:25:19); "explaine2e" looks like a misspelling of it: write "explain-e2e" there`,
		"add: not handled: spec.events (" + file + ":37:11) lists update, not add",
		"update: ignored: changed only ignored paths: metadata.annotations by spec.ignoreChanges[0] metadata (" + file + ":38:19)",
		"onAdd: failed; retry 1 of 1 to come",
		"onAdd: given up after 1 retries",
		file + ":53:13: Error: boom on web",
		`rule "sneaky" may not delete configmaps`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the answer lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("kreact explain:\n%s", out)
	}

	// -o json is the same answer, for programs.
	code, js, stderr := run(t, "explain", "configmaps/web", "-n", ns, "--address", addr, "-o", "json", "--rule", "thrower")
	var o explain.Object
	if err := json.Unmarshal([]byte(js), &o); code != exitOK || err != nil || len(o.Rules) != 1 || o.Rules[0].Name != "thrower" || !o.Exists {
		t.Errorf("explain -o json --rule thrower: %v\n%s", err, transcript(code, js, stderr))
	}

	// Bad input: an exit code and a clear message.
	for _, tt := range []struct {
		args []string
		code int
		err  string
	}{
		{[]string{"configmapz", "web", "-n", ns}, exitUsage, "configmaps"},
		{[]string{"configmaps", "nope", "-n", ns}, exitError, `configmaps "nope" in namespace explain-e2e, and no rule has a record of it`},
		{[]string{"configmaps", "web", "-n", ns, "--rule", "nope"}, exitError, `rule "nope" is not loaded`},
	} {
		code, out, stderr := run(t, append(append([]string{"explain"}, tt.args...), "--address", addr)...)
		if code != tt.code || !strings.Contains(stderr, tt.err) {
			t.Errorf("kreact explain %s: want exit %d and %q\n%s", strings.Join(tt.args, " "), tt.code, tt.err, transcript(code, out, stderr))
		}
	}
	code, out, stderr = run(t, "explain", "configmaps", "web", "--address", testcluster.FreeAddr(t))
	if code != exitError || !strings.Contains(stderr, "kreact cannot be reached") {
		t.Errorf("kreact explain of no kreact:\n%s", transcript(code, out, stderr))
	}
}

// TestRecordEvents: with spec.recordEvents, a call given up and an action
// the API server refuses become Warning Events on the object, which
// kubectl describe shows; kreact explain shows the refusal too.
func TestRecordEvents(t *testing.T) {
	const ns = "record-events-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ensureNamespace(t, dyn, ns)
	dir := t.TempDir()
	writeRule(t, dir, "events.yaml", `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: eventful
spec:
  watch:
    - resource: configmaps
      namespaces: [record-events-e2e]
  events: [add]
  retries: 0
  recordEvents: true
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      if (obj.metadata.name === "bad") throw new Error("boom on bad");
      kreact.patch(obj, {metadata: {labels: {"not valid!": "x"}}});
    }
`)
	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--explain-address", addr)
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	createNamespacedConfigMap(t, dyn, ns, "bad")
	createNamespacedConfigMap(t, dyn, ns, "refused")

	eventsGVR := schema.GroupVersionResource{Version: "v1", Resource: "events"}
	eventOf := func(name string) (reason, message string) {
		list, err := dyn.Resource(eventsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
		if err != nil || len(list.Items) == 0 {
			return "", ""
		}
		e := list.Items[0].Object
		reason, _ = e["reason"].(string)
		message, _ = e["message"].(string)
		if e["type"] != "Warning" {
			return "", ""
		}
		return reason, message
	}
	var reason, message string
	testcluster.Eventually(t, "an Event about the call given up", func() bool { reason, message = eventOf("bad"); return reason != "" })
	if reason != "KreactHandlerGivenUp" || !strings.Contains(message, "rule eventful: onAdd given up after 0 retries: ") || !strings.Contains(message, "events.yaml:17:") || !strings.Contains(message, "boom on bad") {
		t.Errorf("the Event of bad: %s %q", reason, message)
	}
	testcluster.Eventually(t, "an Event about the refused action", func() bool { reason, message = eventOf("refused"); return reason != "" })
	if reason != "KreactActionFailed" || !strings.Contains(message, "rule eventful: patch configmaps record-events-e2e/refused failed: ") || !strings.Contains(message, "not valid!") {
		t.Errorf("the Event of refused: %s %q", reason, message)
	}
	_, out, _ := run(t, "explain", "configmaps", "refused", "-n", ns, "--address", addr)
	if !strings.Contains(out, "patch configmaps record-events-e2e/refused: failed") {
		t.Errorf("explain does not show the refused action:\n%s", out)
	}
}

// TestExplainResolvesTheResourceFirst: kreact explain resolves the
// resource against the API server before it asks kreact, so that a
// misspelt one is a usage error with the names that come close (exit 2)
// whether or not a kreact answers; a resource that resolves, with no
// kreact to ask, is exit 1.
func TestExplainResolvesTheResourceFirst(t *testing.T) {
	addr := testcluster.FreeAddr(t)
	code, out, stderr := run(t, "explain", "configmapz", "web", "-n", "default", "--kubeconfig", cluster.KubeconfigPath(), "--address", addr)
	if code != exitUsage || !strings.Contains(stderr, "unknown resource") || !strings.Contains(stderr, `did you mean "configmaps"?`) || strings.Contains(stderr, "cannot be reached") {
		t.Errorf("kreact explain of a misspelt resource, no kreact running: want exit %d and a did-you-mean\n%s", exitUsage, transcript(code, out, stderr))
	}
	code, out, stderr = run(t, "explain", "deploy/web", "-n", "default", "--kubeconfig", cluster.KubeconfigPath(), "--address", addr)
	if code != exitError || !strings.Contains(stderr, "kreact cannot be reached") {
		t.Errorf("kreact explain of a known resource, no kreact running: want exit %d and cannot be reached\n%s", exitError, transcript(code, out, stderr))
	}
}

// TestExplainFinalizedDelete: the answer about an object deleted, held by
// the rule's finalizer and released by onDelete lists its records in time
// order, with one onDelete, and the rule's line says the object is
// deleted.
func TestExplainFinalizedDelete(t *testing.T) {
	const ns = "explain-finalized-e2e"
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ensureNamespace(t, dyn, ns)
	dir := t.TempDir()
	writeRule(t, dir, "held.yaml", `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: held
spec:
  watch:
    - resource: configmaps
      namespaces: [explain-finalized-e2e]
  finalizer: true
  script: |
    function onAdd(obj, ctx) {}
    function onDelete(obj, ctx) { kreact.log("cleaned up", {name: obj.metadata.name}); }
`)
	addr := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--explain-address", addr)
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	createNamespacedConfigMap(t, dyn, ns, "web")
	cms := dyn.Resource(configMapsGVR).Namespace(ns)
	testcluster.Eventually(t, "the finalizer", func() bool {
		cm, err := cms.Get(t.Context(), "web", metav1.GetOptions{})
		return err == nil && slices.Contains(cm.GetFinalizers(), "kreact.dev/held")
	})
	if err := cms.Delete(t.Context(), "web", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the object to go", func() bool {
		_, err := cms.Get(t.Context(), "web", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	var o explain.Object
	var last string
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the last answer:\n%s", last)
		}
	})
	testcluster.Eventually(t, "the delete's records", func() bool {
		code, js, stderr := run(t, "explain", "cm", "web", "-n", ns, "--address", addr, "-o", "json")
		last = transcript(code, js, stderr)
		o = explain.Object{}
		if code != exitOK || json.Unmarshal([]byte(js), &o) != nil || len(o.Rules) != 1 || len(o.Rules[0].Traces) != 1 {
			return false
		}
		recs := o.Rules[0].Traces[0].Records
		return slices.ContainsFunc(recs, func(r explain.Record) bool { return r.Kind == "call" && r.Result == "ok; finalizer removed" }) &&
			slices.ContainsFunc(recs, func(r explain.Record) bool { return r.Kind == "change" && r.Event == "delete" && r.Result == "dropped" })
	})
	recs := o.Rules[0].Traces[0].Records
	if o.Exists || !slices.IsSortedFunc(recs, func(a, b explain.Record) int { return a.At.Compare(b.At) }) {
		t.Errorf("records out of time order, or the object exists: %+v", o)
	}
	// The final delete, which the watch may report before the answer to
	// the finalizer's removal, calls nothing: one delete, one onDelete.
	if n := len(slices.DeleteFunc(slices.Clone(recs), func(r explain.Record) bool { return r.Kind != "call" || r.Event != "delete" })); n != 1 {
		t.Errorf("%d onDelete calls, want 1: %+v", n, recs)
	}
	code, out, stderr := run(t, "explain", "cm", "web", "-n", ns, "--address", addr)
	if code != exitOK || !strings.Contains(out, "rule held (") || !strings.Contains(out, "): deleted\n") || !strings.Contains(out, "onDelete: ok; finalizer removed (") {
		t.Errorf("kreact explain of the deleted object:\n%s", transcript(code, out, stderr))
	}
}
