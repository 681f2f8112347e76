//go:build e2e

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/testcluster"
)

// recordRule reacts to every kind of change of the ConfigMaps in
// record-e2e, and arms a timer on the second update; its logs tell the
// test that each change has been handled.
const recordRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: recorded
spec:
  watch:
    - resource: configmaps
      namespaces: [record-e2e]
  permissions:
    - resources: [configmaps]
      verbs: [patch, event]
  script: |
    function onAdd(cm, ctx) {
      kreact.patch(cm, {metadata: {labels: {seen: "yes"}}});
      kreact.log("added");
    }
    function onUpdate(old, cm, ctx) {
      kreact.patch(cm, {metadata: {annotations: {color: cm.data.color}}});
      if (cm.data.color === "red") kreact.after(cm, "2s");
      kreact.log("updated-" + cm.data.color);
    }
    function onTimer(cm, ctx) {
      kreact.patch(cm, {metadata: {annotations: {reminded: cm.data.color}}});
      kreact.log("timer-" + cm.data.color);
    }
    function onDelete(cm, ctx) {
      kreact.event(cm, {reason: "Gone", message: "deleted " + cm.metadata.name});
      kreact.log("deleted");
    }
`

// TestRecordReplaysOffline records a live sequence (an add, two updates,
// a timer, a delete) with kreact record, then replays the case file with
// kreact test: the replay passes, and the recorded actions are those the
// rule asked for live, in order, none of them carried out.
func TestRecordReplaysOffline(t *testing.T) {
	ctx := t.Context()
	const ns = "record-e2e"
	createNamespace(t, ns)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "rule.yaml"), []byte(recordRule), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "tests", "recorded.yaml")
	if err := os.Mkdir(filepath.Dir(out), 0o755); err != nil {
		t.Fatal(err)
	}
	c := startCLI(t, "record", "-f", filepath.Join(dir, "rule.yaml"), "cm", "-n", ns, "-l", "app=recorded",
		"-o", out, "--kubeconfig", cluster.KubeconfigPath())
	testcluster.Eventually(t, "record to start", func() bool { return strings.Contains(c.stderr.String(), "recording;") })
	if !strings.Contains(c.stderr.String(), "no object matches yet") {
		t.Errorf("record did not say that the selector matches nothing yet:\n%s", c.stderr)
	}

	cms := kubernetes.NewForConfigOrDie(cluster.Config()).CoreV1().ConfigMaps(ns)
	waitLog := func(msg string) {
		t.Helper()
		testcluster.Eventually(t, "the rule to log "+msg, func() bool { return strings.Contains(c.stderr.String(), "msg="+msg) })
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "a", Namespace: ns, Labels: map[string]string{"app": "recorded"}}, Data: map[string]string{"color": "blue"}}
	// An object the selector leaves out: neither recorded nor shown to
	// the rule, so that the case holds every change the rule acted on.
	other := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "other", Namespace: ns}}
	if _, err := cms.Create(ctx, other, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cm, err := cms.Create(ctx, cm, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	waitLog("added")
	for _, color := range []string{"green", "red"} {
		cm.Data["color"] = color
		if cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
		waitLog("updated-" + color)
	}
	waitLog("timer-red")
	// Dry-run: none of the rule's patches reached the cluster.
	if got, err := cms.Get(ctx, "a", metav1.GetOptions{}); err != nil || got.Labels["seen"] != "" || len(got.Annotations) > 0 {
		t.Errorf("the rule changed the cluster: %v, labels %v, annotations %v", err, got.GetLabels(), got.GetAnnotations())
	}
	if err := cms.Delete(ctx, "a", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	waitLog("deleted")
	if code := c.stop(); code != exitOK {
		t.Fatalf("kreact record exited %d after Ctrl-C, want 0", code)
	}
	if !strings.Contains(c.stderr.String(), "replayed offline with kreact test: the same actions") {
		t.Errorf("record did not check its replay:\n%s", c.stderr)
	}
	if n := strings.Count(c.stderr.String(), "msg=added"); n != 1 {
		t.Errorf("the rule handled %d adds, want 1: the object outside the selector reached it", n)
	}

	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	var file struct {
		Spec struct {
			Rules []string
			Cases []struct {
				Events []map[string]any
				Expect struct{ Actions []map[string]any }
			}
		}
	}
	if err := yaml.Unmarshal(data, &file); err != nil {
		t.Fatal(err)
	}
	if len(file.Spec.Cases) != 1 {
		t.Fatalf("recorded %d cases, want 1:\n%s", len(file.Spec.Cases), data)
	}
	if want := []string{"../rule.yaml"}; !slices.Equal(file.Spec.Rules, want) {
		t.Errorf("spec.rules = %q, want %q", file.Spec.Rules, want)
	}
	cs := file.Spec.Cases[0]
	var changes []string
	for _, ev := range cs.Events {
		for _, typ := range []string{"add", "update", "delete"} {
			if o, ok := ev[typ].(map[string]any); ok {
				md := o["metadata"].(map[string]any)
				changes = append(changes, typ+" "+md["name"].(string))
				if _, ok := md["managedFields"]; ok {
					t.Errorf("%s %s keeps metadata.managedFields", typ, md["name"])
				}
				if _, ok := md["resourceVersion"]; ok {
					t.Errorf("%s %s keeps metadata.resourceVersion", typ, md["name"])
				}
			}
		}
	}
	if want := []string{"add a", "update a", "update a", "delete a"}; !slices.Equal(changes, want) {
		t.Errorf("recorded changes %q, want %q:\n%s", changes, want, data)
	}
	var got []string
	for _, a := range cs.Expect.Actions {
		delete(a, "resource")
		delete(a, "namespace")
		b, _ := json.Marshal(a)
		got = append(got, string(b))
	}
	want := []string{
		`{"name":"a","patch":{"metadata":{"labels":{"seen":"yes"}}},"patchType":"merge","verb":"patch"}`,
		`{"name":"a","patch":{"metadata":{"annotations":{"color":"green"}}},"patchType":"merge","verb":"patch"}`,
		`{"name":"a","patch":{"metadata":{"annotations":{"color":"red"}}},"patchType":"merge","verb":"patch"}`,
		`{"name":"a","patch":{"metadata":{"annotations":{"reminded":"red"}}},"patchType":"merge","verb":"patch"}`,
		`{"event":{"message":"deleted a","reason":"Gone","type":"Normal"},"name":"a","verb":"event"}`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("recorded actions:\n%s\nwant:\n%s\nfile:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), data)
	}

	t.Logf("recorded:\n%s", data)
	var stdout, stderr bytes.Buffer
	if code := runMain(context.Background(), []string{"test", "-v", out}, &stdout, &stderr); code != exitOK {
		t.Errorf("kreact test %s exited %d, want 0\n%s%s\nfile:\n%s", out, code, stdout.String(), stderr.String(), data)
	}
	if !strings.Contains(stdout.String(), "--- PASS") {
		t.Errorf("the replay did not pass:\n%s", stdout.String())
	}
}

// TestRecordBadInput: an unknown resource is a usage error with a
// did-you-mean, and no rule file is one too.
func TestRecordBadInput(t *testing.T) {
	rule := filepath.Join(t.TempDir(), "rule.yaml")
	if err := os.WriteFile(rule, []byte(recordRule), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"record", "-f", rule, "configmpas", "--kubeconfig", cluster.KubeconfigPath()}, `did you mean "configmaps"`},
		{[]string{"record", "cm", "--kubeconfig", cluster.KubeconfigPath()}, "no rule files"},
		{[]string{"record", "-f", rule, "--kubeconfig", cluster.KubeconfigPath()}, "name a resource"},
	} {
		var stdout, stderr bytes.Buffer
		if code := runMain(t.Context(), tc.args, &stdout, &stderr); code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("kreact %s: exit %d, want %d with %q:\n%s", strings.Join(tc.args, " "), code, exitUsage, tc.want, stderr.String())
		}
	}
}

// TestRecordFor stops by itself after --for and writes the case to
// stdout, here of nothing: the selector matches nothing, and says so.
func TestRecordFor(t *testing.T) {
	rule := filepath.Join(t.TempDir(), "rule.yaml")
	if err := os.WriteFile(rule, []byte(recordRule), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := runMain(t.Context(), []string{"record", "-f", rule, "cm", "-n", "record-e2e", "-l", "app=nothing", "--for", "1s", "--kubeconfig", cluster.KubeconfigPath()}, &stdout, &stderr)
	if code != exitOK || !strings.Contains(stdout.String(), "kind: RuleTest") || !strings.Contains(stdout.String(), "actions: []") {
		t.Errorf("kreact record --for 1s: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	if !strings.Contains(stderr.String(), "no object matches yet") {
		t.Errorf("record did not say that the selector matches nothing:\n%s", stderr.String())
	}
}

// TestRecordChecksItsReplay: a call given up live is an expected error of
// the case, which replays; a rule that acts on objects not recorded (here
// a Secret, where only ConfigMaps are recorded) makes a case that does
// not replay, and record says so.
func TestRecordChecksItsReplay(t *testing.T) {
	ctx := t.Context()
	const ns = "record-check-e2e"
	createNamespace(t, ns)
	dir := t.TempDir()
	const rule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: wide
spec:
  watch:
    - resource: configmaps
      namespaces: [record-check-e2e]
    - resource: secrets
      namespaces: [record-check-e2e]
  retries: 0
  permissions:
    - resources: [configmaps, secrets]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      if (obj.metadata.name === "broken") throw new Error("no good");
      kreact.patch(obj, {metadata: {labels: {seen: "yes"}}});
      kreact.log("added-" + obj.kind + "-" + obj.metadata.name);
    }
`
	if err := os.WriteFile(filepath.Join(dir, "rule.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := kubernetes.NewForConfigOrDie(cluster.Config()).CoreV1()
	record := func(file string, create func(c *cli)) *cli {
		t.Helper()
		c := startCLI(t, "record", "-f", filepath.Join(dir, "rule.yaml"), "cm", "-n", ns, "-o", filepath.Join(dir, file), "--kubeconfig", cluster.KubeconfigPath())
		testcluster.Eventually(t, "record to start", func() bool { return strings.Contains(c.stderr.String(), "recording;") })
		create(c)
		if code := c.stop(); code != exitOK {
			t.Fatalf("kreact record exited %d after Ctrl-C, want 0", code)
		}
		return c
	}

	c := record("given-up.yaml", func(c *cli) {
		if _, err := cs.ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "broken"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testcluster.Eventually(t, "the call to be given up", func() bool { return strings.Contains(c.stderr.String(), "handler call given up") })
	})
	data, _ := os.ReadFile(filepath.Join(dir, "given-up.yaml"))
	if !strings.Contains(c.stderr.String(), "replayed offline with kreact test: the same actions") || !strings.Contains(string(data), "Error: no good (rule wide, onAdd)") {
		t.Errorf("a given-up call: the case does not expect its error, or does not replay:\n%s\nstderr:\n%s", data, c.stderr)
	}

	c = record("secret.yaml", func(c *cli) {
		if _, err := cs.Secrets(ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s"}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		testcluster.Eventually(t, "the rule to act on the Secret", func() bool { return strings.Contains(c.stderr.String(), "msg=added-Secret-s") })
	})
	if !strings.Contains(c.stderr.String(), "the case does not replay as recorded") || !strings.Contains(c.stderr.String(), "--- FAIL") {
		t.Errorf("record did not say that its case does not replay:\n%s", c.stderr)
	}
}
