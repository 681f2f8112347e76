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

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
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

// TestMetricsOfOneRuleAgainstTheAPIServer runs the whole stack with a
// Recorder, serves it, and checks that readiness follows the rule's sync
// and that /metrics counts exactly what the rule did to N new ConfigMaps.
func TestMetricsOfOneRuleAgainstTheAPIServer(t *testing.T) {
	const (
		rule = "cm-counter"
		n    = 12
	)
	// A namespace of its own, so that reruns (-count) start afresh.
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	ns := "metrics-e2e-" + hex.EncodeToString(suffix)
	logs := &testcluster.LogBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	stack, err := kube.Start(ctx, cluster.Config(), kube.Options{Logger: logger})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	rec := metrics.New()
	rec.WatchInformers(stack.Informers.Status)
	eng := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{
		Logger: logger, Observer: rec, MetricsProvider: rec,
	})
	var loaded atomic.Int64
	ready := func() error {
		if loaded.Load() == 0 {
			return errors.New("no rules loaded")
		}
		if !eng.Synced() {
			return errors.New("caches not synced")
		}
		return nil
	}
	srv := httptest.NewServer(metrics.Handler(rec, metrics.HandlerOptions{Ready: ready}))
	engineDone := make(chan struct{})
	go func() { _ = eng.Run(ctx); close(engineDone) }()
	t.Cleanup(func() {
		srv.Close()
		cancel()
		<-engineDone
		_ = stack.Wait()
		if t.Failed() {
			t.Logf("kreact logs:\n%s", logs.String())
		}
	})

	if code, body := get(t, srv.URL+"/readyz"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no rules loaded") {
		t.Fatalf("/readyz before loading = %d %q, want 503 \"not ready: no rules loaded\"", code, body)
	}

	namespaces := schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}
	configMaps := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := stack.Client.Resource(namespaces).Create(t.Context(), nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Whatever the namespace holds already is replayed as adds.
	existing, err := stack.Client.Resource(configMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{})
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
	if err := eng.Load(t.Context(), rs); err != nil {
		t.Fatalf("load rules: %v", err)
	}
	loaded.Store(int64(len(rs)))
	testcluster.Eventually(t, "/readyz to turn 200", func() bool {
		code, _ := get(t, srv.URL+"/readyz")
		return code == http.StatusOK
	})

	for i := range n {
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": fmt.Sprintf("cm-%02d", i), "namespace": ns},
		}}
		if _, err := stack.Client.Resource(configMaps).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
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
	list, err := stack.Client.Resource(configMaps).Namespace(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "counted=yes"})
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
