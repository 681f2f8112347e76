//go:build e2e

package metrics_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/rules"
)

var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// scrape reads /metrics and returns every series by its canonical name,
// name{label="value",...} with the labels sorted.
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	code, body := get(t, url+"/metrics")
	if code != http.StatusOK {
		t.Fatalf("/metrics = %d", code)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		sp := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[sp+1:], 64)
		if err != nil {
			t.Fatalf("bad sample %q: %v", line, err)
		}
		series := line[:sp]
		name, labels := series, ""
		if i := strings.IndexByte(series, '{'); i >= 0 {
			name, labels = series[:i], strings.TrimSuffix(series[i+1:], "}")
		}
		pairs := map[string]string{}
		for p := range strings.SplitSeq(labels, ",") {
			if k, v, ok := strings.Cut(p, "="); ok {
				pairs[k] = strings.Trim(v, `"`)
			}
		}
		out[seriesName(name, pairs)] = v
	}
	return out
}

func seriesName(name string, labels map[string]string) string {
	if len(labels) == 0 {
		return name
	}
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%q", k, labels[k])
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// kreact is the whole stack of kreact run with a Recorder, serving it.
type kreact struct {
	stack  *clientstack.Stack
	eng    *engine.Engine
	rec    *metrics.Recorder
	srv    *httptest.Server
	loaded atomic.Int64 // rules loaded; /readyz is 503 while 0
}

// startKreact starts kreact's stack against the test cluster, wired to a
// Recorder as kreact run wires it, until the test ends.
func startKreact(t *testing.T) *kreact {
	t.Helper()
	logs := &testcluster.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	stack, err := clientstack.Start(ctx, cluster.Config(), clientstack.Options{Logger: logger})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	k := &kreact{stack: stack, rec: metrics.New()}
	k.rec.WatchInformers(stack.Informers.Status)
	k.eng = engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{
		Logger: logger, Observer: k.rec, MetricsProvider: k.rec,
	})
	k.rec.WatchFinalizers(k.eng.Finalizing)
	ready := func() error {
		if k.loaded.Load() == 0 {
			return errors.New("no rules loaded")
		}
		if len(engine.RulesBehind(k.eng.Status())) > 0 {
			return errors.New("caches not synced")
		}
		return nil
	}
	k.srv = httptest.NewServer(metrics.Handler(k.rec, metrics.HandlerOptions{Ready: ready}))
	engineDone := make(chan struct{})
	go func() { _ = k.eng.Run(ctx); close(engineDone) }()
	t.Cleanup(func() {
		k.srv.Close()
		cancel()
		<-engineDone
		_ = stack.Wait()
		if t.Failed() {
			t.Logf("kreact logs:\n%s", logs.String())
		}
	})
	return k
}

// newNamespace creates a namespace of its own for a test, so that reruns
// (-count) start afresh.
func newNamespace(t *testing.T, stack *clientstack.Stack, prefix string) string {
	t.Helper()
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := prefix + hex.EncodeToString(suffix)
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := stack.Client.Resource(namespacesGVR).Create(t.Context(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return ns
}

var (
	namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMapsGVR = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// TestMetricsOfOneRuleAgainstTheAPIServer runs the whole stack with a
// Recorder, serves it, and checks that readiness follows the rule's sync
// and that /metrics counts exactly what the rule did to N new ConfigMaps.
func TestMetricsOfOneRuleAgainstTheAPIServer(t *testing.T) {
	const (
		rule = "cm-counter"
		n    = 12
	)
	k := startKreact(t)
	stack, srv := k.stack, k.srv

	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no rules loaded") {
		t.Fatalf("/readyz before loading = %d %q, want 503 \"not ready: no rules loaded\"", code, body)
	}

	ns := newNamespace(t, stack, "metrics-e2e-")
	// Whatever the namespace holds already is replayed as adds.
	existing, err := stack.Client.Resource(configMapsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pre := len(existing.Items)

	rs, err := rules.Parse("rules.yaml", fmt.Appendf(nil, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  events: [add]
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {labels: {"counted": "yes"}}});
    }
`, rule, ns))
	if err != nil {
		t.Fatalf("parse rules: %v", err)
	}
	if err := k.eng.Load(t.Context(), rs); err != nil {
		t.Fatalf("load rules: %v", err)
	}
	k.loaded.Store(int64(len(rs)))
	testcluster.Eventually(t, "/readyz to turn 200", func() bool {
		code, _ := get(t, srv.URL+"/readyz")
		return code == http.StatusOK
	})

	for i := range n {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%02d", i), "namespace": ns},
		}}
		if _, err := stack.Client.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	want := float64(pre + n)
	succeeded := seriesName("kreact_actions_total", map[string]string{"rule": rule, "verb": "patch", "outcome": "succeeded"})
	var got map[string]float64
	testcluster.Eventually(t, "every patch to succeed", func() bool {
		got = scrape(t, srv.URL)
		return got[succeeded] >= want
	})
	// Every ConfigMap carries the label: the actions really happened.
	list, err := stack.Client.Resource(configMapsGVR).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "counted=yes"})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != pre+n {
		t.Errorf("%d configmaps labelled, want %d", len(list.Items), pre+n)
	}
	// The labels are updates, which this rule does not handle: let any
	// stray delivery arrive before the final scrape.
	queue := map[string]string{"name": "kreact_rule_" + rule}
	testcluster.Eventually(t, "the action queue to drain", func() bool {
		got = scrape(t, srv.URL)
		return got[seriesName("kreact_workqueue_depth", queue)] == 0 &&
			got[seriesName("kreact_informer_objects", map[string]string{"resource": "configmaps", "namespace": ns})] == want
	})
	time.Sleep(500 * time.Millisecond)
	got = scrape(t, srv.URL)

	byRuleEvent := map[string]string{"rule": rule, "event": "add"}
	for series, value := range map[string]float64{
		seriesName("kreact_events_total", map[string]string{"rule": rule, "resource": "configmaps", "event": "add"}): want,
		seriesName("kreact_handler_calls_total", byRuleEvent):                                                        want,
		seriesName("kreact_handler_duration_seconds_count", byRuleEvent):                                             want,
		succeeded: want,
		seriesName("kreact_workqueue_adds_total", queue):                                                   want,
		seriesName("kreact_workqueue_work_duration_seconds_count", queue):                                  want,
		seriesName("kreact_informer_synced", map[string]string{"resource": "configmaps", "namespace": ns}): 1,
	} {
		if got[series] != value {
			t.Errorf("%s = %v, want %v", series, got[series], value)
		}
	}
	// Nothing else was counted for this rule: no other event, no handler
	// error, no action that did not succeed at once.
	for family, wantSeries := range map[string]int{
		"kreact_events_total":         1,
		"kreact_handler_calls_total":  1,
		"kreact_handler_errors_total": 0,
		"kreact_actions_total":        1,
	} {
		var series []string
		for s := range got {
			if strings.HasPrefix(s, family+"{") && strings.Contains(s, `rule="`+rule+`"`) {
				series = append(series, s)
			}
		}
		if len(series) != wantSeries {
			t.Errorf("%s has %d series for the rule, want %d: %v", family, len(series), wantSeries, series)
		}
	}
}

// TestFinalizerWaitAgainstTheAPIServer deletes a ConfigMap held by a
// rule's finalizer whose onDelete fails, and checks that /metrics shows
// it waiting, for longer at each scrape, until onDelete succeeds and the
// object goes.
func TestFinalizerWaitAgainstTheAPIServer(t *testing.T) {
	const rule = "holder"
	k := startKreact(t)
	ns := newNamespace(t, k.stack, "metrics-fin-")
	cms := k.stack.Client.Resource(configMapsGVR).Namespace(ns)
	// onDelete fails while the object is labelled hold=yes; with no
	// retries it is given up at once, and the object keeps waiting.
	rs, err := rules.Parse("rules.yaml", fmt.Appendf(nil, `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: configmaps
      namespaces: [%s]
  finalizer: true
  retries: 0
  script: |
    function onDelete(obj, ctx) {
      if ((obj.metadata.labels || {}).hold === "yes") throw new Error("held");
    }
`, rule, ns))
	if err != nil {
		t.Fatalf("parse rules: %v", err)
	}
	if err := k.eng.Load(t.Context(), rs); err != nil {
		t.Fatalf("load rules: %v", err)
	}
	k.loaded.Store(1)
	waiting := seriesName("kreact_finalizer_waiting_objects", map[string]string{"rule": rule})
	oldest := seriesName("kreact_finalizer_oldest_wait_seconds", map[string]string{"rule": rule})
	testcluster.Eventually(t, "the rule's finalizer gauges at 0", func() bool {
		got := scrape(t, k.srv.URL)
		v, ok := got[waiting]
		return ok && v == 0 && got[oldest] == 0
	})

	cm := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "held", "namespace": ns, "labels": map[string]any{"hold": "yes"}},
	}}
	if _, err := cms.Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the finalizer on the ConfigMap", func() bool {
		got, err := cms.Get(t.Context(), "held", metav1.GetOptions{})
		return err == nil && slices.Contains(got.GetFinalizers(), "kreact.dev/"+rule)
	})
	if err := cms.Delete(t.Context(), "held", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	var first float64
	testcluster.Eventually(t, "one object waiting on the finalizer", func() bool {
		got := scrape(t, k.srv.URL)
		first = got[oldest]
		return got[waiting] == 1
	})
	// The API server's deletionTimestamp has a one-second resolution: the
	// age grows past it within two seconds.
	testcluster.Eventually(t, "the oldest wait to grow", func() bool {
		return scrape(t, k.srv.URL)[oldest] >= max(first, 1)+1
	})

	// Lifting the hold is an update of the deleted object: onDelete runs
	// again on it and succeeds, the finalizer goes, and so does the object.
	if _, err := cms.Patch(t.Context(), "held", types.MergePatchType, []byte(`{"metadata":{"labels":{"hold":"no"}}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	testcluster.Eventually(t, "the ConfigMap to be gone", func() bool {
		_, err := cms.Get(t.Context(), "held", metav1.GetOptions{})
		return apierrors.IsNotFound(err)
	})
	testcluster.Eventually(t, "no object waiting on the finalizer", func() bool {
		got := scrape(t, k.srv.URL)
		return got[waiting] == 0 && got[oldest] == 0
	})
}
