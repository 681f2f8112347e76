//go:build e2e

package engine_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// guardRule watches the ConfigMaps of namespace admission-only and reads
// Secrets; script holds its handlers.
func guardRule(script string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: guard
spec:
  watch:
    - resource: configmaps
      namespaces: [admission-only]
  reads: [secrets]
  timeout: 300ms
  script: |
    %s
`, script)
}

// TestAdmissionOnlyRuleStartsNoWatch: a rule whose script has admission
// handlers only starts no informer for its spec.watch, neither warm on a
// standby nor running on the leader (the API server sends the handlers
// every change, and nothing else would read the cache); it keeps the
// informer of its spec.reads, runs and reports synced. Once its script
// declares onAdd, the watch starts.
func TestAdmissionOnlyRuleStartsNoWatch(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("admission-only")
	// keys lists the informers an owner holds, as "resource/namespace".
	keys := func(owner string) []string {
		var out []string
		for _, s := range h.informers.Status() {
			if slices.Contains(s.Owners, owner) {
				out = append(out, s.Key.GVR.Resource+"/"+s.Key.Namespace)
			}
		}
		slices.Sort(out)
		return out
	}
	admissionOnly := guardRule(`function onValidate(req, ctx) { if (!req.object.data?.owner) return "a ConfigMap needs data.owner"; }`)

	rs, err := rules.Parse("rules.yaml", []byte(admissionOnly))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	warmDone := make(chan error, 1)
	go func() { warmDone <- h.engine.Warm(ctx, rs) }()
	testcluster.Eventually(t, "the warm watches", func() bool { return h.engine.WarmWatches() > 0 })
	if got, want := keys("warm:guard"), []string{"secrets/"}; !slices.Equal(got, want) {
		t.Errorf("warm informers %v, want %v", got, want)
	}
	cancel()
	if err := <-warmDone; err != nil {
		t.Fatal(err)
	}

	h.mustLoad(admissionOnly)
	if got, want := keys("guard"), []string{"secrets/"}; !slices.Equal(got, want) {
		t.Errorf("informers of the admission-only rule %v, want %v", got, want)
	}
	if st := h.engine.Status(); len(st) != 1 || !st[0].Running || !st[0].Synced {
		t.Errorf("status %+v, want guard running and synced", st)
	}
	if n := h.logs.Count(`msg="rule started"`, "rule=guard", "watches=1", "informers=1"); n != 1 {
		t.Errorf("%d 'rule started' lines with watches=1 informers=1, want 1:\n%s", n, h.logs.String())
	}

	h.mustLoad(guardRule(`function onValidate(req, ctx) {}
    function onAdd(obj, ctx) {}`))
	if got, want := keys("guard"), []string{"configmaps/admission-only", "secrets/"}; !slices.Equal(got, want) {
		t.Errorf("informers with onAdd %v, want %v", got, want)
	}
}
