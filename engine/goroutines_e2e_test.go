//go:build e2e

package engine_test

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/rules"
)

// idleRuleGoroutines is the most goroutines an idle rule may add to the
// process, beside other rules on the same resource: its informer
// listener's two (client-go's processorListener run and pop), its
// runtime's Serve and the goroutine it serves on, its delivery's Run, its
// action queue's Run and one action worker waiting, and two for each of
// its two client-go workqueues (the delaying queue's waitingLoop and the
// unfinished-work gauges' loop, which client-go v0.37's options cannot
// drop; see docs/design/performance-history.md, "Many rules").
const idleRuleGoroutines = 11

// TestE2EIdleRuleGoroutines pins idleRuleGoroutines: ten more idle rules
// on the resource of one, each with a label selector of its own (one
// informer, selecting locally) and the metrics of kreact run, add at most
// ten times as many goroutines.
func TestE2EIdleRuleGoroutines(t *testing.T) {
	h := start(t, engine.Options{MetricsProvider: metrics.New()})
	h.namespace("idle-goroutines")
	for i := range 20 {
		h.configMap("idle-goroutines", fmt.Sprintf("cm-%02d", i), map[string]string{"group": fmt.Sprint(i % 10)}, map[string]string{"i": fmt.Sprint(i)})
	}
	count := func(n int) int {
		t.Helper()
		rs, err := rules.Parse("rules.yaml", []byte(idleRules(n)))
		if err != nil {
			t.Fatal(err)
		}
		if err := h.engine.Load(t.Context(), rs); err != nil {
			t.Fatal(err)
		}
		testcluster.Eventually(t, fmt.Sprintf("%d rules running, synced and idle", n), func() bool {
			st := h.engine.Status()
			if len(st) != n {
				return false
			}
			for _, s := range st {
				if !s.Running || !s.Synced || s.Queued > 0 {
					return false
				}
			}
			return true
		})
		// Goroutines that end by themselves (a call's timer, a
		// delayed add) come and go: the least of a few samples is
		// what the rules hold.
		least := runtime.NumGoroutine()
		for range 20 {
			time.Sleep(100 * time.Millisecond)
			least = min(least, runtime.NumGoroutine())
		}
		return least
	}
	one := count(1)
	eleven := count(11)
	if added := eleven - one; added > 10*idleRuleGoroutines {
		t.Errorf("ten idle rules added %d goroutines (%.1f a rule), want at most %d a rule", added, float64(added)/10, idleRuleGoroutines)
	} else {
		t.Logf("ten idle rules added %d goroutines (%.1f a rule)", added, float64(added)/10)
	}
}

// idleRules returns n rules that watch the ConfigMaps of namespace
// idle-goroutines, rule i those labelled group=i, and patch each object
// they see once (kreact.once), so that each has made a call and an
// action before it is idle.
func idleRules(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `---
apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: idle-%d
spec:
  watch:
    - resource: configmaps
      namespaces: [idle-goroutines]
      labelSelector: group=%d
  permissions:
    - resources: [configmaps]
      verbs: [patch]
      namespaces: [idle-goroutines]
  script: |
    function onAdd(cm, ctx) {
      if (kreact.once(cm)) {
        kreact.patch(cm, {metadata: {annotations: {"idle/%d": "seen"}}});
      }
    }
`, i, i, i)
	}
	return b.String()
}
