//go:build e2e

package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

const syncRule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: sync-copies
spec:
  watch:
    - resource: configmaps
      namespaces: [fin-src]
  finalizer: true
  rateLimit: 200
  burst: 200
  actionWorkers: 16
  permissions:
    - resources: [configmaps]
      verbs: [apply, delete]
      namespaces: [fin-copies]
  script: |
    function copyOf(cm) {
      return {apiVersion: "v1", kind: "ConfigMap", metadata: {name: "copy-" + cm.metadata.name, namespace: "fin-copies"}, data: cm.data || {}};
    }
    function onAdd(cm, ctx) { kreact.apply(copyOf(cm)); }
    function onDelete(cm, ctx) { kreact.delete(copyOf(cm)); }
`

// runEngine runs the whole stack and an engine with rule set yaml until
// the returned stop is called (or the test ends).
func runEngine(t *testing.T, logs *testcluster.LogBuffer, yaml string) (e *engine.Engine, stop func()) {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	stack, err := clientstack.Start(ctx, cluster.Config(), clientstack.Options{Logger: logger})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	e = engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{Logger: logger})
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	rs, err := rules.Parse("rules.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Load(t.Context(), rs); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
			_ = stack.Wait()
		})
	}
	t.Cleanup(stop)
	return e, stop
}

// Done when of the finalizer issue: objects deleted while kreact is away
// get their onDelete when it is back, and are gone within 30s; removing
// the rule then removes every finalizer it added within 30s.
func TestFinalizerRunsDeletesMissedWhileAway(t *testing.T) {
	h := start(t, engine.Options{}) // a client and a namespace helper
	h.namespace("fin-src")
	h.namespace("fin-copies")
	logs := &testcluster.LogBuffer{}
	defer func() {
		if t.Failed() {
			t.Logf("kreact logs:\n%s", logs.String())
		}
	}()
	ctx := t.Context()
	src := h.client.Resource(configMaps).Namespace("fin-src")
	copies := h.client.Resource(configMaps).Namespace("fin-copies")
	const n = 50

	_, stop := runEngine(t, logs, syncRule)
	for i := range n {
		h.configMap("fin-src", fmt.Sprintf("cm-%02d", i), nil, map[string]string{"i": fmt.Sprint(i)})
	}
	testcluster.Eventually(t, "every ConfigMap to carry the finalizer and have its copy", func() bool {
		list, err := src.List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != n {
			return false
		}
		for _, cm := range list.Items {
			if !slices.Contains(cm.GetFinalizers(), "kreact.dev/sync-copies") {
				return false
			}
		}
		cl, err := copies.List(ctx, metav1.ListOptions{})
		return err == nil && len(cl.Items) == n
	})

	stop()
	for i := range n {
		if err := src.Delete(ctx, fmt.Sprintf("cm-%02d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := src.List(ctx, metav1.ListOptions{}); err != nil || len(list.Items) != n {
		t.Fatalf("after the deletes, %d ConfigMaps are held (err %v), want %d", len(list.Items), err, n)
	}

	restarted := time.Now()
	e, _ := runEngine(t, logs, syncRule)
	within(t, 30*time.Second, "every onDelete to run and every ConfigMap to go", func() bool {
		list, err := src.List(ctx, metav1.ListOptions{})
		cl, err2 := copies.List(ctx, metav1.ListOptions{})
		return err == nil && err2 == nil && len(list.Items) == 0 && len(cl.Items) == 0
	})
	t.Logf("50 deletes finished %v after the restart", time.Since(restarted).Round(time.Millisecond))

	// Objects that carry the finalizer when the rule is removed lose it.
	for i := range 5 {
		h.configMap("fin-src", fmt.Sprintf("late-%d", i), nil, nil)
	}
	testcluster.Eventually(t, "the new ConfigMaps to carry the finalizer", func() bool {
		list, err := src.List(ctx, metav1.ListOptions{})
		if err != nil || len(list.Items) != 5 {
			return false
		}
		for _, cm := range list.Items {
			if !slices.Contains(cm.GetFinalizers(), "kreact.dev/sync-copies") {
				return false
			}
		}
		return true
	})
	if err := e.Load(ctx, nil); err != nil {
		t.Fatal(err)
	}
	within(t, 30*time.Second, "the removed rule's finalizers to go", func() bool {
		list, err := src.List(ctx, metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, cm := range list.Items {
			if slices.Contains(cm.GetFinalizers(), "kreact.dev/sync-copies") {
				return false
			}
		}
		return true
	})
	for i := range 5 {
		if err := src.Delete(ctx, fmt.Sprintf("late-%d", i), metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Fatal(err)
		}
	}
}

// within fails the test unless cond holds within d.
func within(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// A rule that selects by label holds its finalizer only on what it
// selects. An object whose labels left the selector while kreact was away
// (no watch tells the next process of it), or that a narrower version of
// the rule no longer selects, loses the finalizer when the rule starts,
// without an onDelete, and one deleted meanwhile goes; otherwise nothing
// would ever let it go.
func TestFinalizerLetsGoOfWhatTheSelectorLeft(t *testing.T) {
	h := start(t, engine.Options{})
	h.namespace("fin-sel")
	logs := &testcluster.LogBuffer{}
	defer func() {
		if t.Failed() {
			t.Logf("kreact logs:\n%s", logs.String())
		}
	}()
	ctx := t.Context()
	cms := h.client.Resource(configMaps).Namespace("fin-sel")
	const fin = "kreact.dev/held"
	rule := func(selector string) string {
		return `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: held
spec:
  watch:
    - resource: configmaps
      namespaces: [fin-sel]
      labelSelector: "` + selector + `"
    - resource: configmaps
      namespaces: [fin-sel]
      labelSelector: "team=z"
  finalizer: true
  permissions:
    - resources: [configmaps]
      verbs: [patch]
      namespaces: [fin-sel]
  script: |
    function onDelete(cm, ctx) {
      kreact.patch({apiVersion: "v1", kind: "ConfigMap", metadata: {name: "deletes", namespace: "fin-sel"}}, {data: {[cm.metadata.name]: "called"}});
    }
`
	}
	carries := func(name string) (held, exists bool) {
		cm, err := cms.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, false
		}
		if err != nil {
			t.Fatal(err)
		}
		return slices.Contains(cm.GetFinalizers(), fin), true
	}
	h.configMap("fin-sel", "deletes", nil, map[string]string{"x": "y"})
	for _, name := range []string{"stays", "leaves", "leaves-and-goes"} {
		h.configMap("fin-sel", name, map[string]string{"team": "a", "tier": "web"}, nil)
	}
	// Selected by the rule's other watch only: what one watch leaves
	// out, another may select, and it keeps the finalizer.
	h.configMap("fin-sel", "other-watch", map[string]string{"team": "z", "tier": "web"}, nil)

	_, stop := runEngine(t, logs, rule("team in (a)"))
	testcluster.Eventually(t, "the three selected ConfigMaps to carry the finalizer", func() bool {
		for _, name := range []string{"stays", "leaves", "leaves-and-goes", "other-watch"} {
			if held, _ := carries(name); !held {
				return false
			}
		}
		return true
	})
	stop()

	relabel := func(name, team string) {
		patch := []byte(`{"metadata":{"labels":{"team":"` + team + `"}}}`)
		if _, err := cms.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	relabel("leaves", "b")
	relabel("leaves-and-goes", "b")
	if err := cms.Delete(ctx, "leaves-and-goes", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	e, _ := runEngine(t, logs, rule("team in (a)"))
	within(t, 30*time.Second, "the ConfigMaps that left the selector to lose the finalizer", func() bool {
		held, _ := carries("leaves")
		_, exists := carries("leaves-and-goes")
		return !held && !exists
	})
	for _, name := range []string{"stays", "other-watch"} {
		if held, _ := carries(name); !held {
			t.Fatalf("ConfigMap %s, still selected, lost the finalizer", name)
		}
	}

	// A version of the rule that selects less lets go of the rest.
	rs, err := rules.Parse("rules.yaml", []byte(rule("team in (a),tier!=web")))
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Load(ctx, rs); err != nil {
		t.Fatal(err)
	}
	within(t, 30*time.Second, "the ConfigMap the new selector leaves out to lose the finalizer", func() bool {
		held, _ := carries("stays")
		return !held
	})
	if held, _ := carries("other-watch"); !held {
		t.Error("the ConfigMap only the rule's other watch selects lost the finalizer")
	}
	d, err := cms.Get(ctx, "deletes", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if data, _, _ := unstructured.NestedStringMap(d.Object, "data"); len(data) != 1 {
		t.Errorf("onDelete was called for %v; an object that leaves the selector while kreact is away, or by an edit, gets none", data)
	}
	// Released only what no watch selects: the two that left at the
	// restart, the one the edit left out after it (a finalizer released
	// by mistake would be put back, and show only here).
	var counts []string
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, "finalizers released from objects the rule no longer selects") {
			_, n, _ := strings.Cut(line, " objects=")
			counts = append(counts, strings.Fields(n + " ")[0])
		}
	}
	if !slices.Equal(counts, []string{"2", "1"}) {
		t.Errorf("the releases logged objects=%v, want [2 1]", counts)
	}
}
