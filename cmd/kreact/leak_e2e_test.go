//go:build e2e

package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// TestRunLeavesNoGoroutine starts kreact run in-process and stops it, 20
// times, plain, with --leader-elect and with --shards, each serving its
// endpoints and reloading its rules; no goroutine of any run outlives it.
func TestRunLeavesNoGoroutine(t *testing.T) {
	leaktest.Check(t)
	dir := t.TempDir()
	writeRule(t, dir, "labeller.yaml", labeller("leak-e2e", "one"))
	// An admission rule: every run serves it, and answers one request.
	writeRule(t, dir, "guard.yaml", admissionRule("guard", "configmaps", "leak-e2e", "", "", `function onValidate(req, ctx) {
  if (req.object.metadata.name === "refused") return "refused";
}`))
	dyn := dynamicClient(t)
	t.Cleanup(func() {
		for _, gvr := range []schema.GroupVersionResource{validatingConfigsGVR, mutatingConfigsGVR} {
			_ = dyn.Resource(gvr).Delete(context.Background(), "kreact-leak-e2e", metav1.DeleteOptions{})
		}
	})
	modes := [][]string{
		nil,
		{"--leader-elect", "--leader-elect-namespace", "default", "--leader-elect-name", "kreact-leak-e2e",
			"--leader-elect-lease-duration", "2s", "--leader-elect-renew-deadline", "1500ms", "--leader-elect-retry-period", "300ms"},
		{"--shards", "--shard-namespace", "default", "--shard-group", "kreact-leak-e2e",
			"--shard-lease-duration", "4s", "--shard-renew-period", "500ms"},
	}
	for i := range 20 {
		mode := modes[i%len(modes)]
		admissionAddr := testcluster.FreeAddr(t)
		args := append([]string{"run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(),
			"--reload-interval", "100ms", "--metrics-bind-address", testcluster.FreeAddr(t),
			"--admission-bind-address", admissionAddr, "--admission-url", "https://" + admissionAddr, "--admission-name", "kreact-leak-e2e"}, mode...)
		stdout, stderr := &testcluster.LogBuffer{}, &testcluster.LogBuffer{}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan int, 1)
		go func() { done <- runMain(ctx, args, stdout, stderr) }()
		running := func() bool { return strings.Contains(stderr.String(), "kreact is running") }
		testcluster.Eventually(t, fmt.Sprintf("run %d to be running", i), func() bool {
			select {
			case code := <-done:
				done <- code
				return true // exited early: reported below
			default:
				return running()
			}
		})
		if i == 0 {
			ensureNamespace(t, dyn, "leak-e2e")
			testcluster.Eventually(t, "the admission rule to refuse", func() bool {
				cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "refused", "namespace": "leak-e2e"}}}
				_, err := dyn.Resource(configMapsGVR).Namespace("leak-e2e").Create(t.Context(), cm, metav1.CreateOptions{})
				return err != nil && strings.Contains(err.Error(), "rule guard: refused")
			})
		}
		cancel()
		select {
		case code := <-done:
			if code != exitOK || !running() {
				t.Fatalf("run %d (%s) exited %d\n%s", i, strings.Join(mode, " "), code, stderr)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("run %d (%s) did not return within 60s of its context ending\n%s", i, strings.Join(mode, " "), stderr)
		}
	}
}
