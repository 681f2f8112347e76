//go:build e2e

package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// previousBuild is kreact built at PreviousRevision, once for the
// package's tests, and that revision's tree.
var previousBuild = func() func(t *testing.T) (rev, bin, src string) {
	var (
		once          sync.Once
		rev, bin, src string
		err           error
	)
	return func(t *testing.T) (string, string, string) {
		once.Do(func() {
			if rev, err = PreviousRevision(); err != nil {
				return
			}
			var dir string
			if dir, err = os.MkdirTemp("", "kreact-previous-"); err == nil {
				bin = filepath.Join(dir, "kreact")
				src = bin + ".src"
				err = buildRevision(rev, bin)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("upgrading from %s", rev)
		return rev, bin, src
	}
}()

// TestUpgradeLosesNothing is a rolling upgrade under load: replicas of the
// previous build (PreviousRevision, built from git) hold finalizers,
// pending timers, once markers, conditions, owned objects and shard
// leases, and are replaced by this build one at a time while the
// operations go on; the oracle checks the whole history as it checks any
// run. Then this build checks the previous revision's example and deploy
// rules and runs its rule tests: the rule format it shipped still loads
// and behaves the same.
func TestUpgradeLosesNothing(t *testing.T) {
	rev, previous, src := previousBuild(t)
	dir := t.TempDir()
	bin := built(t)
	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	faults := Faults{Edits: true, Shards: true}
	c := &Checker{Cluster: cluster, Client: client, Kreact: bin, From: previous, Dir: dir, Faults: faults, Out: testWriter{t}}
	const seed, duration = 3, 45 * time.Second
	h, violations, err := c.Run(t.Context(), seed, duration, nil)
	if err != nil {
		t.Fatal(err)
	}
	Report(testWriter{t}, h, violations, faults)
	if len(violations) > 0 {
		t.Errorf("%d violations; replay with: go run ./hack/chaos -seed %d -duration %v -shards -from rev:%s", len(violations), seed, duration, rev)
	}
	upgraded := map[int]bool{}
	previousRan := false
	for _, p := range h.Procs {
		previousRan = previousRan || p.Previous
		upgraded[p.Slot] = !p.Previous
	}
	if !previousRan {
		t.Error("no replica ran the previous build")
	}
	for slot, ok := range upgraded {
		if !ok {
			t.Errorf("replica %d still ran the previous build at the end", slot)
		}
	}

	for _, args := range [][]string{
		{"validate", "-f", filepath.Join(src, "examples"), "-f", filepath.Join(src, "deploy", "rules")},
		{"test", filepath.Join(src, "examples", "tests")},
	} {
		if out, err := exec.Command(bin, args...).CombinedOutput(); err != nil {
			t.Errorf("kreact %v with the rules of %s: %v\n%s", args, rev, err, out)
		}
	}
}

// TestUpgradeKeepsAdmission: the webhook configurations that the previous
// build applied keep working when this build replaces it: the same
// configurations (no second one beside them), the same CA (kept in the
// --admission-ca-secret Secret, as deploy/ runs it), and the rule's
// refusal served by the new process.
func TestUpgradeKeepsAdmission(t *testing.T) {
	_, previous, _ := previousBuild(t)
	bin := built(t)
	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	const name, ns, home = "kreact-upgrade", "upgrade-admission", "kreact-upgrade"
	validating := schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingwebhookconfigurations"}
	for _, n := range []string{ns, home} {
		obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": n}}}
		if _, err := client.Resource(namespaces).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		// The configuration outlives kreact by design; other tests must
		// not meet it.
		_ = client.Resource(validating).Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	dir := t.TempDir()
	rule := `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: owner-required
spec:
  watch:
    - resource: configmaps
      namespaces: [` + ns + `]
  admission: {failurePolicy: Fail}
  script: |
    function onValidate(req) {
      if (!(req.object.metadata.labels || {}).owner) return "a ConfigMap needs an owner label";
    }
`
	if err := os.WriteFile(filepath.Join(dir, "owner.yaml"), []byte(rule), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testcluster.FreeAddr(t)
	start := func(bin string) (*exec.Cmd, *testcluster.LogBuffer) {
		var log testcluster.LogBuffer
		cmd := exec.Command(bin, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--metrics-bind-address", "", "--explain-address", "",
			"--admission-bind-address", addr, "--admission-url", "https://"+addr, "--admission-name", name,
			"--admission-namespace", home, "--admission-ca-secret", "kreact-upgrade-ca")
		cmd.Stdout, cmd.Stderr = &log, &log
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		return cmd, &log
	}
	caBundle := func() string {
		cfg, err := client.Resource(validating).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return ""
		}
		hooks, _, _ := unstructured.NestedSlice(cfg.Object, "webhooks")
		if len(hooks) != 1 {
			t.Fatalf("%d webhooks in %s, want the rule's one", len(hooks), name)
		}
		ca, _, _ := unstructured.NestedString(hooks[0].(map[string]any), "clientConfig", "caBundle")
		return ca
	}
	refused := func(who string) {
		t.Helper()
		var last error
		testcluster.Eventually(t, who+" to refuse a ConfigMap without an owner", func() bool {
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"generateName": "no-owner-"}}}
			_, last = client.Resource(configMaps).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
			return last != nil && strings.Contains(last.Error(), "a ConfigMap needs an owner label")
		})
	}

	old, oldLog := start(previous)
	testcluster.Eventually(t, "the previous build's webhook configuration", func() bool { return caBundle() != "" })
	refused("the previous build")
	before := caBundle()

	// A rolling update: SIGTERM, then the new build on the same address.
	if err := old.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if err := old.Wait(); err != nil {
		t.Fatalf("the previous build exited with %v:\n%s", err, oldLog)
	}
	_, newLog := start(bin)
	testcluster.Eventually(t, "this build to be running", func() bool { return strings.Contains(newLog.String(), "kreact is running") })
	refused("this build")
	if after := caBundle(); after != before {
		t.Errorf("the configuration's caBundle changed across the upgrade: the CA kept in the Secret was not reused")
	}
	list, err := client.Resource(validating).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range list.Items {
		if cfg.GetName() != name && strings.HasPrefix(cfg.GetName(), "kreact") {
			t.Errorf("a second configuration %s beside %s after the upgrade", cfg.GetName(), name)
		}
	}
	cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"generateName": "owned-", "labels": map[string]any{"owner": "me"}}}}
	if _, err := client.Resource(configMaps).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Errorf("a ConfigMap with an owner was refused after the upgrade: %v", err)
	}
}
