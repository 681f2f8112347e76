//go:build e2e

package engine_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	utilrand "k8s.io/apimachinery/pkg/util/rand"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
)

// outageCatchUpLimit bounds how long after the last restart of the API
// server the rule may take to have reacted to every final state. Left to
// client-go's reflector backoff it took up to a minute; kreact's informers
// and action queues reconnect within a second. The limit checks that
// contract, not speed.
const outageCatchUpLimit = 10 * time.Second

// TestOutagesLoseNoReaction: a rule mirrors data.seq of 200 ConfigMaps
// into an annotation while they are written 2,000 times or more and the
// API server is killed five times, for 3 to 30 s; once the writes stop,
// every ConfigMap shows its final value within seconds.
func TestOutagesLoseNoReaction(t *testing.T) {
	h := start(t, engine.Options{})
	// A fresh namespace, so that the test can run again (-count) on the
	// same control plane.
	ns := "outage-" + utilrand.String(5)
	h.namespace(ns)
	const objects = 200
	for i := range objects {
		h.configMap(ns, fmt.Sprintf("cm-%d", i), nil, map[string]string{"seq": "0"})
	}
	h.mustLoad(fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: mirror
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  events: [add, update]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  rateLimit: 1000
  script: |
    function mirror(obj) {
      const seq = (obj.data || {}).seq;
      if ((obj.metadata.annotations || {})["seq"] !== seq) {
        kreact.patch(obj, {metadata: {annotations: {seq: seq}}});
      }
    }
    function onAdd(obj) { mirror(obj); }
    function onUpdate(old, obj) { mirror(obj); }
`, ns))

	ctx, stopWriting := context.WithCancel(t.Context())
	var writes atomic.Int64
	var writer sync.WaitGroup
	writer.Go(func() {
		ri := h.client.Resource(configMaps).Namespace(ns)
		for round := 1; ctx.Err() == nil || writes.Load() < 2000; round++ {
			for i := range objects {
				patch := fmt.Appendf(nil, `{"data":{"seq":"%d"}}`, round)
				for {
					_, err := ri.Patch(context.Background(), fmt.Sprintf("cm-%d", i), types.MergePatchType, patch, metav1.PatchOptions{})
					if err == nil {
						writes.Add(1)
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
			}
		}
	})
	for _, down := range []time.Duration{3 * time.Second, 5 * time.Second, 3 * time.Second, 30 * time.Second, 3 * time.Second} {
		time.Sleep(time.Second)
		if err := cluster.KillAPIServer(); err != nil {
			t.Fatalf("kill API server: %v", err)
		}
		time.Sleep(down)
		restart := time.Now()
		if err := cluster.StartAPIServer(); err != nil {
			t.Fatalf("start API server: %v", err)
		}
		t.Logf("API server down %v, ready %v after its start; %d writes so far", down, time.Since(restart).Round(time.Millisecond), writes.Load())
	}
	stopWriting()
	writer.Wait()
	back := time.Now()

	testcluster.Eventually(t, "every ConfigMap to show its final data.seq", func() bool {
		list, err := h.client.Resource(configMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, cm := range list.Items {
			seq, _, _ := unstructured.NestedString(cm.Object, "data", "seq")
			if cm.GetAnnotations()["seq"] != seq {
				return false
			}
		}
		return len(list.Items) == objects
	})
	took := time.Since(back)
	if took > outageCatchUpLimit {
		t.Errorf("the rule caught up %v after the writes stopped, want within %v", took, outageCatchUpLimit)
	}
	t.Logf("%d writes, 5 restarts; every final state reacted to %v after the writes stopped", writes.Load(), took.Round(time.Millisecond))
}
