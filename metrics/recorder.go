package metrics

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"k8s.io/client-go/util/workqueue"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/finalizers"
)

const namespace = "kreact"

// Recorder records kreact's metrics in its own registry. Its methods are
// safe for concurrent use.
type Recorder struct {
	registry *prometheus.Registry

	events         *prometheus.CounterVec
	handlerCalls   *prometheus.CounterVec
	handlerErrors  *prometheus.CounterVec
	handlerSeconds *prometheus.HistogramVec
	handlerGivenUp *prometheus.CounterVec
	handlerRest    *prometheus.CounterVec
	changesDropped *prometheus.CounterVec
	actions        *prometheus.CounterVec
	rulesLoaded    prometheus.Gauge
	reloadFailures prometheus.Counter
	leader         *prometheus.GaugeVec // no labels: absent until Leading is first called
	buildInfo      *prometheus.GaugeVec // absent until BuildInfo is called

	admissionRequests *prometheus.CounterVec
	admissionSeconds  *prometheus.HistogramVec

	queueDepth      *prometheus.GaugeVec
	queueAdds       *prometheus.CounterVec
	queueLatency    *prometheus.HistogramVec
	queueWork       *prometheus.HistogramVec
	queueUnfinished *prometheus.GaugeVec
	queueLongest    *prometheus.GaugeVec
	queueRetries    *prometheus.CounterVec

	informers  *informerCollector
	finalizers *finalizerCollector

	errMu      sync.Mutex
	lastErrors map[string]lastError // by rule: RuleCounts
}

// A Recorder is also the admission.Observer of kreact run, which checks
// that where it wires them: metrics imports no package that runs scripts.
var _ workqueue.MetricsProvider = (*Recorder)(nil)

// handlerBuckets span a fast script (100µs) to one at the longest allowed
// timeout (a minute).
var handlerBuckets = prometheus.ExponentialBuckets(0.0001, 4, 10)

// queueBuckets are those of client-go's workqueue metrics in Kubernetes
// components: 1ns to 10s, by factors of ten.
var queueBuckets = prometheus.ExponentialBuckets(10e-9, 10, 11)

// New returns a Recorder with every kreact metric, the Go runtime collector
// and the process collector registered in a new registry.
func New() *Recorder {
	r := &Recorder{registry: prometheus.NewRegistry()}
	ruleEvent := []string{"rule", "event"}
	r.events = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "events_total",
		Help: "Changes delivered to a rule, by rule, resource and event (add, update, delete).",
	}, []string{"rule", "resource", "event"})
	r.handlerCalls = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "handler_calls_total",
		Help: "Calls of a rule's JavaScript handler (updates that changed nothing are not called).",
	}, ruleEvent)
	r.handlerErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "handler_errors_total",
		Help: "Handler calls that threw or timed out.",
	}, ruleEvent)
	r.handlerRest = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "handler_rest_seconds_total",
		Help: "How long a rule's workers rested after failed calls: ten times the CPU time each failed call used, and after a memory stop at least 1 s per 32 MiB allocated, at most a minute.",
	}, []string{"rule"})
	r.handlerSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "handler_duration_seconds",
		Help:    "How long a rule's handler calls took.",
		Buckets: handlerBuckets,
	}, ruleEvent)
	r.handlerGivenUp = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "handler_given_up_total",
		Help: "Handler calls that failed and used up their retries (spec.retries); their actions were not queued.",
	}, ruleEvent)
	r.changesDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "changes_dropped_total",
		Help: "Changes dropped because a rule with delivery \"every\" had its queue full.",
	}, []string{"rule"})
	r.actions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "actions_total",
		Help: "Attempts at actions, by rule, verb and outcome (succeeded, retrying, failed, gave-up, waiting).",
	}, []string{"rule", "verb", "outcome"})
	r.rulesLoaded = prometheus.NewGauge(prometheus.GaugeOpts{
		Namespace: namespace, Name: "rules_loaded",
		Help: "Rules in the rule set last loaded successfully.",
	})
	r.reloadFailures = prometheus.NewCounter(prometheus.CounterOpts{
		Namespace: namespace, Name: "rule_reload_failures_total",
		Help: "Reloads of edited rule files that were refused (the previous rules kept running).",
	})
	r.leader = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "leader",
		Help: "1 while this replica runs the rules (it holds the leader lease, or leader election is off), 0 while it stands by.",
	}, nil)
	r.buildInfo = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: namespace, Name: "build_info",
		Help: "Always 1; its labels are the version, the commit and the Go version of this kreact's build (kreact version).",
	}, []string{"version", "commit", "goversion"})

	r.admissionRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: namespace, Name: "admission_requests_total",
		Help: "Admission requests a rule's onValidate or onMutate answered, by rule, operation and result (allowed, denied, patched, would-deny and would-patch in audit mode, failed).",
	}, []string{"rule", "operation", "result"})
	r.admissionSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Name: "admission_duration_seconds",
		Help:    "How long a rule took to answer an admission request.",
		Buckets: handlerBuckets,
	}, []string{"rule"})

	queue := func(name, help string) prometheus.Opts {
		return prometheus.Opts{Namespace: namespace, Subsystem: "workqueue", Name: name, Help: help}
	}
	name := []string{"name"}
	r.queueDepth = prometheus.NewGaugeVec(prometheus.GaugeOpts(queue("depth", "Current depth of the workqueue.")), name)
	r.queueAdds = prometheus.NewCounterVec(prometheus.CounterOpts(queue("adds_total", "Adds handled by the workqueue.")), name)
	r.queueLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "workqueue", Name: "queue_duration_seconds",
		Help: "How long an item stays in the workqueue before being requested.", Buckets: queueBuckets,
	}, name)
	r.queueWork = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Namespace: namespace, Subsystem: "workqueue", Name: "work_duration_seconds",
		Help: "How long processing an item from the workqueue takes.", Buckets: queueBuckets,
	}, name)
	r.queueUnfinished = prometheus.NewGaugeVec(prometheus.GaugeOpts(queue("unfinished_work_seconds",
		"Seconds of work in progress not yet observed by work_duration; large values mean stuck workers.")), name)
	r.queueLongest = prometheus.NewGaugeVec(prometheus.GaugeOpts(queue("longest_running_processor_seconds",
		"Seconds the longest-running item of the workqueue has been processed.")), name)
	r.queueRetries = prometheus.NewCounterVec(prometheus.CounterOpts(queue("retries_total", "Retries handled by the workqueue.")), name)

	r.informers = &informerCollector{
		objects: prometheus.NewDesc(prometheus.BuildFQName(namespace, "informer", "objects"),
			"Objects in the informer caches of a resource and namespace (\"\" is all namespaces), summed over label and field selectors.",
			[]string{"resource", "namespace"}, nil),
		synced: prometheus.NewDesc(prometheus.BuildFQName(namespace, "informer", "synced"),
			"1 when every informer of a resource and namespace has its initial list, else 0.",
			[]string{"resource", "namespace"}, nil),
		shard: prometheus.NewDesc(prometheus.BuildFQName(namespace, "informer", "shard_objects"),
			"Objects in the sharded informers of a resource and namespace (kreact run --shards), by how they are filtered: mode \"server\" (the API server applied the shardSelector), \"client\" (kreact filtered) or \"none\" (this replica owns no shard).",
			[]string{"resource", "namespace", "mode"}, nil),
		shardFiltered: prometheus.NewDesc(prometheus.BuildFQName(namespace, "informer", "shard_filtered_total"),
			"Objects and events of other shards that sharded informers dropped on kreact's side since they started (0 when the API server filters).",
			[]string{"resource", "namespace"}, nil),
	}

	r.finalizers = &finalizerCollector{
		objects: prometheus.NewDesc(prometheus.BuildFQName(namespace, "finalizer", "waiting_objects"),
			"Objects deleted that wait on a rule's finalizer (kreact.dev/RULE) for onDelete and its actions to succeed.",
			[]string{"rule"}, nil),
		oldest: prometheus.NewDesc(prometheus.BuildFQName(namespace, "finalizer", "oldest_wait_seconds"),
			"Seconds since the deletion of the object that has waited longest on a rule's finalizer; 0 when none waits.",
			[]string{"rule"}, nil),
	}

	r.registry.MustRegister(
		r.events, r.handlerCalls, r.handlerErrors, r.handlerSeconds, r.handlerGivenUp, r.handlerRest, r.changesDropped, r.actions,
		r.rulesLoaded, r.reloadFailures, r.leader, r.buildInfo, r.admissionRequests, r.admissionSeconds,
		r.queueDepth, r.queueAdds, r.queueLatency, r.queueWork, r.queueUnfinished, r.queueLongest, r.queueRetries,
		r.informers, r.finalizers,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return r
}

// BuildInfo sets kreact_build_info to 1 with the build's labels, in
// place of any earlier ones. kreact run calls it once at start.
func (r *Recorder) BuildInfo(version, commit, goVersion string) {
	r.buildInfo.Reset()
	r.buildInfo.WithLabelValues(version, commit, goVersion).Set(1)
}

// Registry returns the Recorder's registry, to gather from or to register
// more collectors in.
func (r *Recorder) Registry() *prometheus.Registry { return r.registry }

// Event counts a change delivered to a rule.
func (r *Recorder) Event(rule, resource string, t event.Type) {
	r.events.WithLabelValues(rule, resource, string(t)).Inc()
}

// HandlerCall counts a handler call, its error if any, the rest its
// worker takes after it, and its duration.
func (r *Recorder) HandlerCall(rule string, t event.Type, d time.Duration, err error) {
	r.handlerCalls.WithLabelValues(rule, string(t)).Inc()
	if err != nil {
		r.handlerErrors.WithLabelValues(rule, string(t)).Inc()
		r.noteError(rule, err)
		if rest := delivery.RestAfter(err); rest > 0 {
			r.handlerRest.WithLabelValues(rule).Add(rest.Seconds())
		}
	}
	r.handlerSeconds.WithLabelValues(rule, string(t)).Observe(d.Seconds())
}

// HandlerGivenUp counts a failed handler call that used up its retries.
func (r *Recorder) HandlerGivenUp(rule string, t event.Type, _ error) {
	r.handlerGivenUp.WithLabelValues(rule, string(t)).Inc()
}

// Admitted counts an admission request a rule answered, and how long
// that took.
func (r *Recorder) Admitted(rule, operation string, result event.AdmissionResult, d time.Duration) {
	r.admissionRequests.WithLabelValues(rule, operation, string(result)).Inc()
	r.admissionSeconds.WithLabelValues(rule).Observe(d.Seconds())
}

// ChangesDropped counts changes dropped from a full "every" queue.
func (r *Recorder) ChangesDropped(rule string, n int) {
	r.changesDropped.WithLabelValues(rule).Add(float64(n))
}

// ActionResult counts an attempt at an action by its outcome.
func (r *Recorder) ActionResult(res actions.Result) {
	r.actions.WithLabelValues(res.Action.Rule, string(res.Action.Verb), string(res.Outcome)).Inc()
	if res.Err != nil && (res.Outcome == actions.Failed || res.Outcome == actions.GaveUp) {
		r.noteError(res.Action.Rule, res.Err)
	}
}

// RulesLoaded records the size of the rule set just loaded.
func (r *Recorder) RulesLoaded(n int) { r.rulesLoaded.Set(float64(n)) }

// ReloadFailed counts a refused reload.
func (r *Recorder) ReloadFailed() { r.reloadFailures.Inc() }

// Reloaded is the rule set's engine.ReloadOptions.Reloaded: it counts a
// load of the rule files that failed (ReloadFailed), and nothing of one
// that did not.
func (r *Recorder) Reloaded(err error) {
	if err != nil {
		r.ReloadFailed()
	}
}

// Leading records whether this replica runs the rules: true when it has
// become the leader (or leader election is off), false while it stands by.
// kreact_leader is absent until the first call.
func (r *Recorder) Leading(leading bool) {
	v := 0.0
	if leading {
		v = 1
	}
	r.leader.WithLabelValues().Set(v)
}

// WatchInformers makes every scrape report the informers that status
// returns, as kreact_informer_objects and kreact_informer_synced. status is
// called once per scrape, from the scraping goroutine; nil stops the
// reports. Typically status is (*dynamicinformer.Manager).Status.
func (r *Recorder) WatchInformers(status func() []dynamicinformer.WatchStatus) {
	r.informers.mu.Lock()
	defer r.informers.mu.Unlock()
	r.informers.status = status
}

// WatchFinalizers makes every scrape report, for each rule with
// spec.finalizer, how many deleted objects wait on its finalizer
// (kreact_finalizer_waiting_objects) and how long the oldest has waited
// (kreact_finalizer_oldest_wait_seconds). status is called once per
// scrape, from the scraping goroutine; nil stops the reports. Typically
// status is (*engine.Engine).Finalizing.
func (r *Recorder) WatchFinalizers(status func() []finalizers.Waiting) {
	r.finalizers.mu.Lock()
	defer r.finalizers.mu.Unlock()
	r.finalizers.status = status
}

// The workqueue.MetricsProvider methods. client-go calls each once per
// queue; a queue created again under the same name (a rule restarted by a
// reload) continues the same series.

// NewDepthMetric returns the depth gauge of the named queue.
func (r *Recorder) NewDepthMetric(name string) workqueue.GaugeMetric {
	return r.queueDepth.WithLabelValues(name)
}

// NewAddsMetric returns the adds counter of the named queue.
func (r *Recorder) NewAddsMetric(name string) workqueue.CounterMetric {
	return r.queueAdds.WithLabelValues(name)
}

// NewLatencyMetric returns the queue-duration histogram of the named queue.
func (r *Recorder) NewLatencyMetric(name string) workqueue.HistogramMetric {
	return r.queueLatency.WithLabelValues(name)
}

// NewWorkDurationMetric returns the work-duration histogram of the named queue.
func (r *Recorder) NewWorkDurationMetric(name string) workqueue.HistogramMetric {
	return r.queueWork.WithLabelValues(name)
}

// NewUnfinishedWorkSecondsMetric returns the unfinished-work gauge of the named queue.
func (r *Recorder) NewUnfinishedWorkSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return r.queueUnfinished.WithLabelValues(name)
}

// NewLongestRunningProcessorSecondsMetric returns the longest-running gauge
// of the named queue.
func (r *Recorder) NewLongestRunningProcessorSecondsMetric(name string) workqueue.SettableGaugeMetric {
	return r.queueLongest.WithLabelValues(name)
}

// NewRetriesMetric returns the retries counter of the named queue.
func (r *Recorder) NewRetriesMetric(name string) workqueue.CounterMetric {
	return r.queueRetries.WithLabelValues(name)
}

// informerCollector reports the informers' state at scrape time.
type informerCollector struct {
	objects, synced      *prometheus.Desc
	shard, shardFiltered *prometheus.Desc

	mu     sync.Mutex
	status func() []dynamicinformer.WatchStatus
}

func (c *informerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.synced
	ch <- c.shard
	ch <- c.shardFiltered
}

func (c *informerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	status := c.status
	c.mu.Unlock()
	if status == nil {
		return
	}
	type key struct{ resource, namespace string }
	type sums struct {
		objects int
		synced  bool
	}
	var order []key
	totals := map[key]*sums{}
	type shardKey struct {
		key
		mode string
	}
	var shardOrder []shardKey
	shardObjects := map[shardKey]int{}
	filtered := map[key]int64{}
	for _, s := range status() {
		k := key{s.Key.GVR.GroupResource().String(), s.Key.Namespace}
		if s.Shard != "" {
			sk := shardKey{k, string(s.Shard)}
			if _, ok := shardObjects[sk]; !ok {
				shardOrder = append(shardOrder, sk)
			}
			shardObjects[sk] += s.Objects
			filtered[k] += s.ShardFiltered
		}
		t, ok := totals[k]
		if !ok {
			t = &sums{synced: true}
			totals[k] = t
			order = append(order, k)
		}
		t.objects += s.Objects
		t.synced = t.synced && s.Synced
	}
	for _, k := range order {
		t := totals[k]
		synced := 0.0
		if t.synced {
			synced = 1
		}
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(t.objects), k.resource, k.namespace)
		ch <- prometheus.MustNewConstMetric(c.synced, prometheus.GaugeValue, synced, k.resource, k.namespace)
	}
	for _, sk := range shardOrder {
		ch <- prometheus.MustNewConstMetric(c.shard, prometheus.GaugeValue, float64(shardObjects[sk]), sk.resource, sk.namespace, sk.mode)
	}
	for k, n := range filtered {
		ch <- prometheus.MustNewConstMetric(c.shardFiltered, prometheus.CounterValue, float64(n), k.resource, k.namespace)
	}
}

// finalizerCollector reports what waits on the rules' finalizers at scrape
// time, so that the wait's age is always current without a ticker.
type finalizerCollector struct {
	objects, oldest *prometheus.Desc

	mu     sync.Mutex
	status func() []finalizers.Waiting
}

func (c *finalizerCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.objects
	ch <- c.oldest
}

func (c *finalizerCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	status := c.status
	c.mu.Unlock()
	if status == nil {
		return
	}
	now := time.Now()
	for _, f := range status() {
		wait := 0.0
		if f.Objects > 0 && !f.Oldest.IsZero() {
			wait = max(0, now.Sub(f.Oldest).Seconds())
		}
		ch <- prometheus.MustNewConstMetric(c.objects, prometheus.GaugeValue, float64(f.Objects), f.Rule)
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, wait, f.Rule)
	}
}
