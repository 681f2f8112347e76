package metrics_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil/promlint"
	dto "github.com/prometheus/client_model/go"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/metrics"
)

// sample finds the series of a family with exactly these labels. Counters
// and gauges give their value, histograms their count.
func sample(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string) (float64, bool) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if !sameLabels(m.GetLabel(), labels) {
				continue
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue(), true
			case m.Gauge != nil:
				return m.GetGauge().GetValue(), true
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount()), true
			}
		}
	}
	return 0, false
}

func sameLabels(got []*dto.LabelPair, want map[string]string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, l := range got {
		if v, ok := want[l.GetName()]; !ok || v != l.GetValue() {
			return false
		}
	}
	return true
}

// expect checks one series' value; want < 0 means the series must be absent.
func expect(t *testing.T, g prometheus.Gatherer, name string, labels map[string]string, want float64) {
	t.Helper()
	got, ok := sample(t, g, name, labels)
	switch {
	case want < 0 && ok:
		t.Errorf("%s%v = %v, want no such series", name, labels, got)
	case want >= 0 && !ok:
		t.Errorf("%s%v missing, want %v", name, labels, want)
	case want >= 0 && got != want:
		t.Errorf("%s%v = %v, want %v", name, labels, got, want)
	}
}

func TestRecorderCountsEngineActivity(t *testing.T) {
	rec := metrics.New()
	reg := rec.Registry()

	for range 3 {
		rec.Event("labeler", "configmaps", event.Add)
	}
	rec.Event("labeler", "deployments.apps", event.Update)
	rec.HandlerCall("labeler", event.Add, 2*time.Millisecond, nil)
	rec.HandlerCall("labeler", event.Add, 3*time.Millisecond, errors.New("boom"))
	rec.HandlerCall("labeler", event.Delete, time.Millisecond, nil)
	rec.HandlerCall("looper", event.Add, time.Second, &event.ScriptError{Timeout: true, CPU: time.Second})
	patch := actions.Action{Rule: "labeler", Verb: actions.Patch}
	rec.ActionResult(actions.Result{Action: patch, Outcome: actions.Retrying, Err: errors.New("conflict")})
	rec.ActionResult(actions.Result{Action: patch, Outcome: actions.Succeeded})
	rec.ActionResult(actions.Result{Action: actions.Action{Rule: "cleaner", Verb: actions.Delete}, Outcome: actions.GaveUp})
	rec.RulesLoaded(4)
	rec.RulesLoaded(3)
	rec.ReloadFailed()
	rec.ReloadFailed()
	rec.Admitted("owner-label", "CREATE", event.Denied, time.Millisecond)
	rec.Admitted("owner-label", "CREATE", event.Denied, time.Millisecond)
	rec.Admitted("audited", "UPDATE", event.WouldDeny, time.Millisecond)

	for _, c := range []struct {
		name   string
		labels map[string]string
		want   float64
	}{
		{"kreact_events_total", map[string]string{"rule": "labeler", "resource": "configmaps", "event": "add"}, 3},
		{"kreact_events_total", map[string]string{"rule": "labeler", "resource": "deployments.apps", "event": "update"}, 1},
		{"kreact_events_total", map[string]string{"rule": "labeler", "resource": "configmaps", "event": "update"}, -1},
		{"kreact_handler_calls_total", map[string]string{"rule": "labeler", "event": "add"}, 2},
		{"kreact_handler_calls_total", map[string]string{"rule": "labeler", "event": "delete"}, 1},
		{"kreact_handler_errors_total", map[string]string{"rule": "labeler", "event": "add"}, 1},
		{"kreact_handler_errors_total", map[string]string{"rule": "labeler", "event": "delete"}, -1},
		{"kreact_handler_duration_seconds", map[string]string{"rule": "labeler", "event": "add"}, 2},
		// A failed call that used no CPU the operating system told of
		// costs no rest; one that looped for a second costs ten.
		{"kreact_handler_rest_seconds_total", map[string]string{"rule": "labeler"}, -1},
		{"kreact_handler_rest_seconds_total", map[string]string{"rule": "looper"}, 10},
		{"kreact_actions_total", map[string]string{"rule": "labeler", "verb": "patch", "outcome": "retrying"}, 1},
		{"kreact_actions_total", map[string]string{"rule": "labeler", "verb": "patch", "outcome": "succeeded"}, 1},
		{"kreact_actions_total", map[string]string{"rule": "cleaner", "verb": "delete", "outcome": "gave-up"}, 1},
		{"kreact_rules_loaded", nil, 3},
		{"kreact_rule_reload_failures_total", nil, 2},
		{"kreact_leader", nil, -1},
		{"kreact_admission_requests_total", map[string]string{"rule": "owner-label", "operation": "CREATE", "result": "denied"}, 2},
		{"kreact_admission_requests_total", map[string]string{"rule": "audited", "operation": "UPDATE", "result": "would-deny"}, 1},
		{"kreact_admission_duration_seconds", map[string]string{"rule": "owner-label"}, 2},
	} {
		expect(t, reg, c.name, c.labels, c.want)
	}

	rec.Leading(false)
	expect(t, reg, "kreact_leader", nil, 0)
	rec.Leading(true)
	expect(t, reg, "kreact_leader", nil, 1)
}

func TestHandlerDurationBuckets(t *testing.T) {
	rec := metrics.New()
	rec.HandlerCall("r", event.Add, 150*time.Microsecond, nil)
	rec.HandlerCall("r", event.Add, 30*time.Second, nil)
	mfs, err := rec.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "kreact_handler_duration_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if got := h.GetSampleSum(); got < 30 || got > 30.001 {
			t.Errorf("sum = %v, want 30.00015", got)
		}
		// 150µs falls in the second bucket (≤ 400µs); 30s is above the
		// largest bound (26.2s), so only the implicit +Inf bucket holds it.
		b := h.GetBucket()
		if b[0].GetCumulativeCount() != 0 || b[1].GetCumulativeCount() != 1 || b[len(b)-1].GetCumulativeCount() != 1 {
			t.Errorf("buckets %v", b)
		}
		return
	}
	t.Fatal("kreact_handler_duration_seconds not gathered")
}

func TestRecorderIsAWorkqueueMetricsProvider(t *testing.T) {
	rec := metrics.New()
	reg := rec.Registry()
	q := workqueue.NewTypedRateLimitingQueueWithConfig(
		workqueue.NewTypedItemExponentialFailureRateLimiter[string](time.Millisecond, time.Millisecond),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "kreact_rule_demo", MetricsProvider: rec},
	)
	defer q.ShutDown()
	q.Add("a")
	q.Add("b")
	q.Add("a") // deduplicated: not an add
	name := map[string]string{"name": "kreact_rule_demo"}
	expect(t, reg, "kreact_workqueue_depth", name, 2)
	expect(t, reg, "kreact_workqueue_adds_total", name, 2)

	item, _ := q.Get()
	expect(t, reg, "kreact_workqueue_depth", name, 1)
	expect(t, reg, "kreact_workqueue_queue_duration_seconds", name, 1)
	q.AddRateLimited(item)
	q.Done(item)
	expect(t, reg, "kreact_workqueue_retries_total", name, 1)
	expect(t, reg, "kreact_workqueue_work_duration_seconds", name, 1)
	for _, gauge := range []string{"kreact_workqueue_unfinished_work_seconds", "kreact_workqueue_longest_running_processor_seconds"} {
		if _, ok := sample(t, reg, gauge, name); !ok {
			t.Errorf("%s missing", gauge)
		}
	}
	expect(t, reg, "kreact_workqueue_depth", map[string]string{"name": "other"}, -1)
}

func TestInformerGaugesAreCollectedAtScrapeTime(t *testing.T) {
	rec := metrics.New()
	reg := rec.Registry()
	cms := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploys := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	var statuses []dynamicinformer.WatchStatus
	rec.WatchInformers(func() []dynamicinformer.WatchStatus { return statuses })

	statuses = []dynamicinformer.WatchStatus{
		{Key: dynamicinformer.Key{GVR: cms, Namespace: "a"}, Synced: true, Objects: 5},
		{Key: dynamicinformer.Key{GVR: cms, Namespace: "a", LabelSelector: "x=y"}, Synced: false, Objects: 2},
		{Key: dynamicinformer.Key{GVR: cms}, Synced: true, Objects: 40},
		{Key: dynamicinformer.Key{GVR: deploys}, Synced: true, Objects: 7},
	}
	for _, c := range []struct {
		metric    string
		resource  string
		namespace string
		want      float64
		name      string
	}{
		{"kreact_informer_objects", "configmaps", "a", 7, "two selectors are summed"},
		{"kreact_informer_synced", "configmaps", "a", 0, "one selector still listing"},
		{"kreact_informer_objects", "configmaps", "", 40, "all namespaces"},
		{"kreact_informer_synced", "configmaps", "", 1, "all namespaces synced"},
		{"kreact_informer_objects", "deployments.apps", "", 7, "group in the resource"},
	} {
		t.Run(c.name, func(t *testing.T) {
			expect(t, reg, c.metric, map[string]string{"resource": c.resource, "namespace": c.namespace}, c.want)
		})
	}

	statuses = statuses[3:]
	expect(t, reg, "kreact_informer_objects", map[string]string{"resource": "configmaps", "namespace": "a"}, -1)
	rec.WatchInformers(nil)
	expect(t, reg, "kreact_informer_objects", map[string]string{"resource": "deployments.apps", "namespace": ""}, -1)
}

func TestFinalizerGaugesAreCollectedAtScrapeTime(t *testing.T) {
	rec := metrics.New()
	reg := rec.Registry()
	var status []finalizers.Waiting
	rec.WatchFinalizers(func() []finalizers.Waiting { return status })

	status = []finalizers.Waiting{
		{Rule: "idle"},
		{Rule: "sync", Objects: 3, Oldest: time.Now().Add(-90 * time.Second)},
	}
	expect(t, reg, "kreact_finalizer_waiting_objects", map[string]string{"rule": "idle"}, 0)
	expect(t, reg, "kreact_finalizer_oldest_wait_seconds", map[string]string{"rule": "idle"}, 0)
	expect(t, reg, "kreact_finalizer_waiting_objects", map[string]string{"rule": "sync"}, 3)
	// The age is computed at the scrape: it grows between scrapes without
	// anything being recorded.
	first, _ := sample(t, reg, "kreact_finalizer_oldest_wait_seconds", map[string]string{"rule": "sync"})
	if first < 90 || first > 120 {
		t.Errorf("oldest wait = %vs, want about 90s", first)
	}
	time.Sleep(20 * time.Millisecond)
	if second, _ := sample(t, reg, "kreact_finalizer_oldest_wait_seconds", map[string]string{"rule": "sync"}); second <= first {
		t.Errorf("oldest wait went from %v to %v between scrapes, want it to grow", first, second)
	}

	status = status[:1]
	expect(t, reg, "kreact_finalizer_waiting_objects", map[string]string{"rule": "sync"}, -1)
	rec.WatchFinalizers(nil)
	expect(t, reg, "kreact_finalizer_waiting_objects", map[string]string{"rule": "idle"}, -1)
}

// Reloaded counts the loads that failed, not the others.
func TestReloaded(t *testing.T) {
	rec := metrics.New()
	rec.Reloaded(nil)
	expect(t, rec.Registry(), "kreact_rule_reload_failures_total", nil, 0)
	rec.Reloaded(errors.New("r.yaml:1:1: bad"))
	rec.Reloaded(nil)
	expect(t, rec.Registry(), "kreact_rule_reload_failures_total", nil, 1)
}

func TestMetricNamesFollowPrometheusConventions(t *testing.T) {
	rec := metrics.New()
	rec.Event("r", "configmaps", event.Add)
	rec.HandlerCall("r", event.Add, time.Millisecond, errors.New("x"))
	rec.ActionResult(actions.Result{Action: actions.Action{Rule: "r", Verb: actions.Patch}, Outcome: actions.Succeeded})
	rec.ReloadFailed()
	rec.Leading(true)
	rec.NewDepthMetric("q").Inc()
	rec.NewAddsMetric("q").Inc()
	rec.NewLatencyMetric("q").Observe(1)
	rec.NewWorkDurationMetric("q").Observe(1)
	rec.NewUnfinishedWorkSecondsMetric("q").Set(1)
	rec.NewLongestRunningProcessorSecondsMetric("q").Set(1)
	rec.NewRetriesMetric("q").Inc()
	rec.WatchInformers(func() []dynamicinformer.WatchStatus {
		return []dynamicinformer.WatchStatus{{Key: dynamicinformer.Key{GVR: schema.GroupVersionResource{Version: "v1", Resource: "pods"}}, Synced: true}}
	})
	rec.WatchFinalizers(func() []finalizers.Waiting {
		return []finalizers.Waiting{{Rule: "r", Objects: 1, Oldest: time.Now().Add(-time.Second)}}
	})
	mfs, err := rec.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var ours []*dto.MetricFamily
	for _, mf := range mfs {
		if strings.HasPrefix(mf.GetName(), "kreact_") {
			ours = append(ours, mf)
		}
	}
	if len(ours) != 19 {
		t.Errorf("gathered %d kreact_ families, want 19", len(ours))
	}
	problems, err := promlint.NewWithMetricFamilies(ours).Lint()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("%s: %s", p.Metric, p.Text)
	}
}

func TestRecordersDoNotShareARegistry(t *testing.T) {
	a, b := metrics.New(), metrics.New()
	a.ReloadFailed()
	expect(t, a.Registry(), "kreact_rule_reload_failures_total", nil, 1)
	expect(t, b.Registry(), "kreact_rule_reload_failures_total", nil, 0)
}

// TestBuildInfo: kreact_build_info is absent until set, then 1 with the
// build's labels, and setting it again replaces them.
func TestBuildInfo(t *testing.T) {
	rec := metrics.New()
	reg := rec.Registry()
	v1 := map[string]string{"version": "v0.1.0", "commit": "abc123", "goversion": "go1.26.0"}
	expect(t, reg, "kreact_build_info", v1, -1)
	rec.BuildInfo("v0.1.0", "abc123", "go1.26.0")
	expect(t, reg, "kreact_build_info", v1, 1)
	rec.BuildInfo("v0.2.0", "def456", "go1.26.0")
	expect(t, reg, "kreact_build_info", v1, -1)
	expect(t, reg, "kreact_build_info", map[string]string{"version": "v0.2.0", "commit": "def456", "goversion": "go1.26.0"}, 1)
}
