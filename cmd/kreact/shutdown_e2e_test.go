//go:build e2e

package main

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestSIGTERMWithALoopingScriptAndQueuedChanges: a real kreact process
// whose only rule loops on every one of 1,000 ConfigMaps receives SIGTERM.
// It must exit well inside Kubernetes' default 30 s grace period: the call
// under way ends at its timeout and the queued calls are dropped (they are
// replayed as initial adds at the next start).
func TestSIGTERMWithALoopingScriptAndQueuedChanges(t *testing.T) {
	const ns, objects = "shutdown-e2e", 1000
	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = 500, 1000
	dyn := dynamic.NewForConfigOrDie(cfg)
	ensureNamespace(t, dyn, ns)
	var wg sync.WaitGroup
	errs := make(chan error, objects)
	for w := range 10 {
		wg.Go(func() {
			for i := w; i < objects; i += 10 {
				cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
					"metadata": map[string]any{"name": fmt.Sprintf("cm-%04d", i), "namespace": ns}}}
				if _, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}

	dir := t.TempDir()
	writeRule(t, dir, "looper.yaml", `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: looper
spec:
  watch:
    - resource: configmaps
      namespaces: [`+ns+`]
  events: [add]
  timeout: 1s
  script: |
    function onAdd(obj) { for (;;) {} }
`)
	k := startKreact(t, "run", "-f", dir)
	stderr := k.stderr
	testcluster.Eventually(t, "the looping script to time out", func() bool { return strings.Contains(stderr.String(), "timed out") })

	k.terminate(t)
	if !strings.Contains(stderr.String(), "replayed as initial adds at the next start") {
		t.Error("the dropped calls were not logged")
	}
}
