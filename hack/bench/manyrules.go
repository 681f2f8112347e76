package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	cgdynamicinformer "k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/workqueue"

	"github.com/kreact/kreact/hack/internal/benchstat"
	"github.com/kreact/kreact/internal/testcluster"
)

// The many-rules phase (-many-rules N): N rules on the same three
// resources, in one kreact process, against one of them alone and against
// N bare controllers, each with its own informer and workqueue.

// manyNamespace holds the phase's objects.
const manyNamespace = "bench-many"

// manyGroupLabel is the label whose value a rule's selector matches.
const manyGroupLabel = "bench-group"

// manyAnnotationPrefix starts the annotation each rule mirrors into:
// bench.kreact.dev/r7 for rule 7.
const manyAnnotationPrefix = "bench.kreact.dev/r"

// manyWidgets is the phase's custom resource.
var manyWidgets = testcluster.CRD{Group: "bench.kreact.dev", Kind: "Widget", Plural: "widgets"}

// manyResource is one of the three resources: where its objects hold the
// value the rules mirror, and how the writer sets it.
type manyResource struct {
	name string
	gvr  schema.GroupVersionResource
	kind string
	// top is the map holding seq and the other fields: data, or spec.
	top string
	// base64 is true for Secrets, whose data the API server returns
	// encoded (the rules mirror the encoded value).
	base64 bool
}

var manyResources = []manyResource{
	{name: "configmaps", gvr: configMaps, kind: "ConfigMap", top: "data"},
	{name: "secrets", gvr: schema.GroupVersionResource{Version: "v1", Resource: "secrets"}, kind: "Secret", top: "data", base64: true},
	{name: "widgets", gvr: manyWidgets.GVR(), kind: "Widget", top: "spec"},
}

// manyPlan says which rule watches what: rule j watches resource j%3;
// the objects of a resource are in as many groups as rules watch it, and
// each rule selects perWrite consecutive groups, so that every object is
// selected by exactly perWrite rules (fewer if fewer rules watch its
// resource).
type manyPlan struct {
	rules, objects, perWrite int
}

// resourceOf is the index of the resource rule j watches.
func (p manyPlan) resourceOf(j int) int { return j % len(manyResources) }

// rulesOn is how many rules watch resource r.
func (p manyPlan) rulesOn(r int) int {
	n := p.rules / len(manyResources)
	if r < p.rules%len(manyResources) {
		n++
	}
	return n
}

// objectsOf is how many objects resource r has: the objects are spread
// evenly over the resources.
func (p manyPlan) objectsOf(r int) int {
	n := p.objects / len(manyResources)
	if r < p.objects%len(manyResources) {
		n++
	}
	return n
}

// groupOf is the group of object i of resource r.
func (p manyPlan) groupOf(r, i int) int { return i % max(p.rulesOn(r), 1) }

// groups are the groups rule j selects.
func (p manyPlan) groups(j int) []int {
	m, n := j/len(manyResources), p.rulesOn(p.resourceOf(j))
	var gs []int
	for k := range min(p.perWrite, n) {
		gs = append(gs, (m+k)%n)
	}
	slices.Sort(gs)
	return gs
}

// reactors are the rules, among the first active ones, that select
// object i of resource r.
func (p manyPlan) reactors(r, i, active int) []int {
	g := p.groupOf(r, i)
	var js []int
	for j := r; j < min(active, p.rules); j += len(manyResources) {
		if slices.Contains(p.groups(j), g) {
			js = append(js, j)
		}
	}
	return js
}

func manyObjectName(r, i int) string {
	return fmt.Sprintf("%s-%04d", strings.TrimSuffix(manyResources[r].name, "s"), i)
}
func manyAnnotation(j int) string { return manyAnnotationPrefix + strconv.Itoa(j) }
func manyRuleName(j int) string   { return fmt.Sprintf("many-r%02d", j) }

// manyRule is rule j's file: it watches the objects of its groups (its
// labelSelector, the bare controller's) of its resource in manyNamespace,
// keeps seq and one other field of its own choosing (fields), ignores
// changes of annotations (its own writes, and the other rules'), and
// mirrors seq into its own annotation. The rules of a resource share one
// watch, whatever their selectors (see dynamicinformer).
func (p manyPlan) manyRule(j int) string {
	r := manyResources[p.resourceOf(j)]
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: %s
spec:
  watch:
    - resource: %s
      namespaces: [%s]
      labelSelector: %q
      fields: [%s.seq, %s.f%d]
  events: [add, update]
  ignoreChanges: [metadata.annotations]
  permissions:
    - resources: [%s]
      verbs: [patch]
  rateLimit: 10000
  burst: 100000
  script: |
    function mirror(obj) {
      const v = (obj.%s || {}).seq;
      if (v !== undefined && (obj.metadata.annotations || {})[%q] !== v) {
        kreact.patch(obj, {metadata: {annotations: {%q: v}}});
      }
    }
    function onAdd(obj) { mirror(obj); }
    function onUpdate(oldObj, obj) { mirror(obj); }
`, manyRuleName(j), r.name, manyNamespace, p.selector(j), r.top, r.top, j%5, r.name,
		r.top, manyAnnotation(j), manyAnnotation(j))
}

// manyBareSpec is one bare controller of the baseline: what rule j does,
// written as a Go programmer would, with the selector sent to the server.
type manyBareSpec struct {
	Rule       int    `json:"rule"`
	Resource   int    `json:"resource"`
	Selector   string `json:"selector"`
	Annotation string `json:"annotation"`
}

// bareSpec is rule j's bare controller.
func (p manyPlan) bareSpec(j int) manyBareSpec {
	return manyBareSpec{Rule: j, Resource: p.resourceOf(j), Selector: p.selector(j), Annotation: manyAnnotation(j)}
}

// selector is rule j's label selector, the same for its rule and its
// bare controller: its groups.
func (p manyPlan) selector(j int) string {
	var gs []string
	for _, g := range p.groups(j) {
		gs = append(gs, strconv.Itoa(g))
	}
	return fmt.Sprintf("%s in (%s)", manyGroupLabel, strings.Join(gs, ","))
}

// decodeMirrored reads a mirrored value: a Secret's is the base64 of
// the number.
func decodeMirrored(v string, b64 bool) (int64, bool) {
	if b64 {
		d, err := base64.StdEncoding.DecodeString(v)
		if err != nil {
			return 0, false
		}
		v = string(d)
	}
	n, err := strconv.ParseInt(v, 10, 64)
	return n, err == nil
}

// manyBench is the phase's setting and state.
type manyBench struct {
	plan     manyPlan
	rate     float64 // reactions per second asked for
	load     time.Duration
	settle   time.Duration
	timeout  time.Duration
	repeats  int
	variants []string
	// kreact and base are the binaries of the kreact and base variants
	// (base: a second build, to compare two versions in one run).
	kreact, base string
	profile      string
	bareWorkers  int
	qps          float64
	burst        int

	kubeconfig string
	client     dynamic.Interface
	apiserver  *apiserverMetrics
	dir        string
	tracker    *tracker
	seq        atomic.Int64
	locks      [][]sync.Mutex
	// last is the last value written to each object, for the reset.
	last [][]int64
}

// manyRun is one variant's figures in one repeat.
type manyRun struct {
	variant        string
	repeat         int
	rules          int
	writes         int
	patches        int64
	cpu            float64 // load and drain
	settleCPU      float64 // from the end of the drain to the steady RSS's reading
	hwm, rss       int64   // VmHWM, and VmRSS after the settle
	watches        int64   // watches of the three resources the variant opened
	left           int
	drain          time.Duration
	p50, p99       time.Duration
	startup        time.Duration
	processes      int
	loadTime       time.Duration
	reactionsAsked int
}

// manyVariantRules is how many rules a variant runs.
func manyVariantRules(v string, n int) int {
	if strings.HasSuffix(v, "-1") {
		return 1
	}
	return n
}

// setupMany creates the namespace, the CRD and the objects, every one
// already mirrored for every rule, and starts the observer.
func setupMany(ctx context.Context, b *manyBench) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": manyNamespace}}}
	if _, err := b.client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace: %w", err)
	}
	if err := testcluster.CreateCRD(ctx, b.client, manyWidgets); err != nil {
		return err
	}
	p := b.plan
	b.locks = make([][]sync.Mutex, len(manyResources))
	b.last = make([][]int64, len(manyResources))
	for r, res := range manyResources {
		n := p.objectsOf(r)
		b.locks[r] = make([]sync.Mutex, n)
		b.last[r] = make([]int64, n)
		err := poll(ctx, time.Minute, func() bool {
			_, err := b.client.Resource(res.gvr).Namespace(manyNamespace).List(ctx, metav1.ListOptions{Limit: 1})
			return err == nil
		})
		if err != nil {
			return fmt.Errorf("%s not served: %w", res.name, err)
		}
		err = parallel(32, n, func(i int) error {
			_, err := b.client.Resource(res.gvr).Namespace(manyNamespace).Create(ctx, manyObject(p, r, i), metav1.CreateOptions{})
			if err != nil && !apierrors.IsAlreadyExists(err) {
				return fmt.Errorf("create %s: %w", manyObjectName(r, i), err)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	b.tracker = newTracker()
	for r := range manyResources {
		if err := observeMany(ctx, b.client, r, b.tracker); err != nil {
			return err
		}
	}
	return nil
}

// manyObject is object i of resource r, seq 0 mirrored for all its
// reactors; five short fields the rules choose from, and a 512 B payload
// no rule keeps.
func manyObject(p manyPlan, r, i int) *unstructured.Unstructured {
	res := manyResources[r]
	annotations := map[string]any{}
	zero := "0"
	if res.base64 {
		zero = base64.StdEncoding.EncodeToString([]byte("0"))
	}
	for _, j := range p.reactors(r, i, p.rules) {
		annotations[manyAnnotation(j)] = zero
	}
	fields := map[string]any{"seq": "0", "payload": payload(i)[:512]}
	for f := range 5 {
		fields["f"+strconv.Itoa(f)] = fmt.Sprintf("value-%d-%d", i, f)
	}
	top := res.top
	if res.base64 {
		top = "stringData"
	}
	apiVersion := "v1"
	if res.gvr.Group != "" {
		apiVersion = res.gvr.Group + "/" + res.gvr.Version
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": res.kind,
		"metadata": map[string]any{"name": manyObjectName(r, i), "namespace": manyNamespace,
			"labels": map[string]any{manyGroupLabel: strconv.Itoa(p.groupOf(r, i))}, "annotations": annotations},
		top: fields,
	}}
}

// observeMany feeds the mirrored annotations of resource r's objects
// into the tracker until ctx ends.
func observeMany(ctx context.Context, client dynamic.Interface, r int, t *tracker) error {
	res := manyResources[r]
	inf := cgdynamicinformer.NewFilteredDynamicInformer(client, res.gvr, manyNamespace, 0, cache.Indexers{}, nil).Informer()
	seen := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		vals := map[string]int64{}
		for k, v := range u.GetAnnotations() {
			if strings.HasPrefix(k, manyAnnotationPrefix) {
				if n, ok := decodeMirrored(v, res.base64); ok {
					vals[k] = n
				}
			}
		}
		t.saw(res.name+"/"+u.GetName(), vals, time.Now())
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: seen, UpdateFunc: func(_, obj any) { seen(obj) }})
	go inf.Run(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		return fmt.Errorf("observer of %s did not sync", res.name)
	}
	return nil
}

// manyTarget is an object the load writes, and the rules that react.
type manyTarget struct {
	r, i     int
	reactors []string
}

// targets are the objects a variant running active rules reacts to,
// each with its reactors' annotations: with one rule, the objects it
// selects; with all, every object.
func (p manyPlan) targets(active int) []manyTarget {
	var ts []manyTarget
	for r := range manyResources {
		for i := range p.objectsOf(r) {
			js := p.reactors(r, i, active)
			if len(js) == 0 {
				continue
			}
			var as []string
			for _, j := range js {
				as = append(as, manyAnnotation(j))
			}
			ts = append(ts, manyTarget{r, i, as})
		}
	}
	return ts
}

// write sets seq of one object to the next value.
func (b *manyBench) write(ctx context.Context, t manyTarget) {
	b.locks[t.r][t.i].Lock()
	defer b.locks[t.r][t.i].Unlock()
	res := manyResources[t.r]
	name := manyObjectName(t.r, t.i)
	seq := b.seq.Add(1)
	b.tracker.wrote(res.name+"/"+name, seq, t.reactors, time.Now())
	top := res.top
	if res.base64 {
		top = "stringData"
	}
	patch := fmt.Appendf(nil, `{%q:{"seq":%q}}`, top, strconv.FormatInt(seq, 10))
	if _, err := b.client.Resource(res.gvr).Namespace(manyNamespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		b.tracker.failed(res.name+"/"+name, seq)
		return
	}
	b.last[t.r][t.i] = seq
}

// steady writes to random targets for d at writes per second, and
// returns how many it made and how long it took.
func (b *manyBench) steady(ctx context.Context, ts []manyTarget, rate float64, d time.Duration) (int, time.Duration) {
	return paced(ctx, rate, d, len(ts), func(i int) { b.write(ctx, ts[i]) })
}

// reset mirrors, by the benchmark's own patches, every object's last
// value into the annotation of every rule that selects it, so that no
// run starts with work a run of fewer rules left behind.
func (b *manyBench) reset(ctx context.Context) error {
	p := b.plan
	for r, res := range manyResources {
		err := parallel(32, p.objectsOf(r), func(i int) error {
			seq := b.last[r][i]
			if seq == 0 {
				return nil
			}
			v := strconv.FormatInt(seq, 10)
			if res.base64 {
				v = base64.StdEncoding.EncodeToString([]byte(v))
			}
			as := map[string]string{}
			for _, j := range p.reactors(r, i, p.rules) {
				as[manyAnnotation(j)] = v
			}
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": as}})
			_, err := b.client.Resource(res.gvr).Namespace(manyNamespace).Patch(ctx, manyObjectName(r, i), types.MergePatchType, patch, metav1.PatchOptions{})
			return err
		})
		if err != nil {
			return fmt.Errorf("reset %s: %w", res.name, err)
		}
	}
	return nil
}

// writeRules writes the rule files: dir/all with every rule, dir/one
// with rule 0.
func (b *manyBench) writeRules() error {
	for _, d := range []string{"all", "one"} {
		if err := os.MkdirAll(filepath.Join(b.dir, d), 0o755); err != nil {
			return err
		}
	}
	for j := range b.plan.rules {
		rule := []byte(b.plan.manyRule(j))
		if err := os.WriteFile(filepath.Join(b.dir, "all", manyRuleName(j)+".yaml"), rule, 0o644); err != nil {
			return err
		}
		if j == 0 {
			if err := os.WriteFile(filepath.Join(b.dir, "one", manyRuleName(j)+".yaml"), rule, 0o644); err != nil {
				return err
			}
		}
	}
	specs := make([]manyBareSpec, b.plan.rules)
	for j := range specs {
		specs[j] = b.plan.bareSpec(j)
	}
	data, err := json.Marshal(specs)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(b.dir, "bare.json"), data, 0o644)
}

// manyProcess is the process, or processes, of one variant.
type manyProcess struct {
	procs []*controller
	// metricsAddr is kreact's; empty for the bare controllers.
	metricsAddr string
	stopOnce    sync.Once
}

func (m *manyProcess) pids() []int {
	var ps []int
	for _, c := range m.procs {
		ps = append(ps, c.cmd.Process.Pid)
	}
	return ps
}

// stop stops every process and waits for them; it may be called again.
func (m *manyProcess) stop() {
	m.stopOnce.Do(func() {
		var wg sync.WaitGroup
		for _, c := range m.procs {
			wg.Go(c.stop)
		}
		wg.Wait()
	})
}

// startManyKreact runs kreact on the rule files of dir.
func (b *manyBench) startManyKreact(bin, dir string) (*manyProcess, error) {
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	metrics := fmt.Sprintf("127.0.0.1:%d", ports[0])
	health := fmt.Sprintf("127.0.0.1:%d", ports[1])
	c := &controller{name: "kreact", metricsAddr: metrics, pprofAddr: metrics, ready: make(chan struct{}), stopped: make(chan struct{}), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	c.cmd = exec.Command(bin, "run", "-f", dir, "--kubeconfig", b.kubeconfig,
		"--kube-api-qps", strconv.FormatFloat(b.qps, 'f', -1, 64), "--kube-api-burst", strconv.Itoa(b.burst),
		"--metrics-bind-address", metrics, "--health-probe-bind-address", health,
		"--log-level", "warn", "--reload-interval", "0", "--pprof")
	if err := c.start(); err != nil {
		return nil, err
	}
	go c.pollReady(health)
	return &manyProcess{procs: []*controller{c}, metricsAddr: metrics}, nil
}

// startManyBare runs the bare controllers of rules 0..n-1: all in this
// program re-executed once, or one process each.
func (b *manyBench) startManyBare(n int, separate bool) (*manyProcess, error) {
	self, err := bareBinary()
	if err != nil {
		return nil, err
	}
	var sets [][]int
	if separate {
		for j := range n {
			sets = append(sets, []int{j})
		}
	} else {
		sets = [][]int{make([]int, n)}
		for j := range n {
			sets[0][j] = j
		}
	}
	m := &manyProcess{}
	for _, set := range sets {
		var only []string
		for _, j := range set {
			only = append(only, strconv.Itoa(j))
		}
		c := &controller{name: "bare", ready: make(chan struct{}), stopped: make(chan struct{}), stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
		c.cmd = exec.Command(self, "-bare-many", filepath.Join(b.dir, "bare.json"), "-bare-only", strings.Join(only, ","),
			"-kubeconfig", b.kubeconfig, "-workers", strconv.Itoa(b.bareWorkers),
			"-qps", strconv.FormatFloat(b.qps, 'f', -1, 64), "-burst", strconv.Itoa(b.burst))
		if err := c.startSaysSynced(); err != nil {
			m.stop()
			return nil, err
		}
		m.procs = append(m.procs, c)
	}
	return m, nil
}

// watches counts the API server's open watches of the three resources
// (apiserver_longrunning_requests).
func (m *apiserverMetrics) watches(ctx context.Context) (int64, error) {
	text, err := m.page(ctx)
	if err != nil {
		return 0, err
	}
	var sum int64
	for _, res := range manyResources {
		n, err := sumMetric(text, "apiserver_longrunning_requests", `verb="WATCH"`, fmt.Sprintf(`resource=%q`, res.name), fmt.Sprintf(`group=%q`, res.gvr.Group))
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

// measureMany runs one variant once.
func measureMany(ctx context.Context, b *manyBench, variant string, repeat int) (manyRun, error) {
	r := manyRun{variant: variant, repeat: repeat, rules: manyVariantRules(variant, b.plan.rules)}
	if err := b.reset(ctx); err != nil {
		return r, err
	}
	// Let the observer catch up with the reset before counting.
	if err := sleep(ctx, 2*time.Second); err != nil {
		return r, err
	}
	b.tracker.forget()
	watches0, err := b.apiserver.watches(ctx)
	if err != nil {
		return r, err
	}
	dir := filepath.Join(b.dir, "all")
	if r.rules == 1 {
		dir = filepath.Join(b.dir, "one")
	}
	start := time.Now()
	var p *manyProcess
	switch {
	case strings.HasPrefix(variant, "kreact-"):
		p, err = b.startManyKreact(b.kreact, dir)
	case strings.HasPrefix(variant, "base-"):
		p, err = b.startManyKreact(b.base, dir)
	case strings.HasPrefix(variant, "bareprocs-"):
		p, err = b.startManyBare(r.rules, true)
	case strings.HasPrefix(variant, "bare-"):
		p, err = b.startManyBare(r.rules, false)
	default:
		err = fmt.Errorf("unknown variant %q (kreact-1, kreact-N, base-1, base-N, bare-N, bareprocs-N)", variant)
	}
	if err != nil {
		return r, err
	}
	defer p.stop()
	r.processes = len(p.procs)
	for _, c := range p.procs {
		if err := c.waitReady(ctx, b.timeout); err != nil {
			return r, err
		}
	}
	r.startup = time.Since(start)
	// Nothing should be left to do; give the initial adds a moment.
	if err := sleep(ctx, 3*time.Second); err != nil {
		return r, err
	}
	watches1, err := b.apiserver.watches(ctx)
	if err != nil {
		return r, err
	}
	r.watches = watches1 - watches0
	patches0, err := p.patches(false)
	if err != nil {
		return r, err
	}
	cpu0, err := sumCPU(p.pids())
	if err != nil {
		return r, err
	}
	b.tracker.takeLatencies()
	ts := b.plan.targets(r.rules)
	perWrite := float64(len(ts[0].reactors))
	profiled := p.procs[0].profile("", "", 0)
	if b.profile != "" && r.rules > 1 && p.metricsAddr != "" {
		profiled = p.procs[0].profile(b.profile, fmt.Sprintf("many-%s-r%d", variant, repeat+1), b.load)
	}
	r.writes, r.loadTime = b.steady(ctx, ts, b.rate/perWrite, b.load)
	r.reactionsAsked = int(float64(r.writes) * perWrite)
	if err := <-profiled; err != nil {
		fmt.Fprintf(os.Stderr, "  profile: %v\n", err)
	}
	end := time.Now()
	for b.tracker.outstanding() > 0 && time.Since(end) < b.timeout && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	r.drain = time.Since(end)
	r.left = b.tracker.outstanding()
	lat := b.tracker.takeLatencies()
	r.p50, r.p99 = benchstat.Percentile(lat, 50), benchstat.Percentile(lat, 99)
	cpu1, err := sumCPU(p.pids())
	if err != nil {
		return r, err
	}
	r.cpu = cpu1 - cpu0
	if err := sleep(ctx, b.settle); err != nil {
		return r, err
	}
	// What the process does once the load is over (returning memory,
	// say) is not in the CPU per reaction; it is reported beside it.
	cpu2, err := sumCPU(p.pids())
	if err != nil {
		return r, err
	}
	r.settleCPU = cpu2 - cpu1
	// The runtime's figures (heap live and goal, stacks, what it holds
	// from the system) are saved before the memory is read, and the heap
	// profile, which collects first, after: so that the RSS read is the
	// one a run without profiles reads, and the figures are the same
	// moment's.
	var kp *kreactProcess
	stamp := fmt.Sprintf("many-%s-r%d", variant, repeat+1)
	if b.profile != "" && p.metricsAddr != "" {
		kp = &kreactProcess{metrics: p.metricsAddr}
		if err := os.MkdirAll(b.profile, 0o755); err != nil {
			return r, err
		}
		_ = kp.saveProfile(ctx, "/metrics", filepath.Join(b.profile, stamp+"-metrics.txt"))
	}
	for _, pid := range p.pids() {
		hwm, rss, err := benchstat.Memory(pid)
		if err != nil {
			return r, err
		}
		r.hwm += hwm
		r.rss += rss
	}
	if kp != nil {
		// The text's MemStats are read after the collection, so that
		// its HeapAlloc is the live heap; the profile follows it.
		_ = kp.saveProfile(ctx, "/debug/pprof/heap?gc=1&debug=1", filepath.Join(b.profile, stamp+"-heap.txt"))
		_ = kp.saveProfile(ctx, "/debug/pprof/heap", filepath.Join(b.profile, stamp+"-heap.pprof"))
		_ = kp.saveProfile(ctx, "/debug/pprof/goroutine?debug=1", filepath.Join(b.profile, stamp+"-goroutines.txt"))
	}
	if p.metricsAddr != "" {
		patches1, err := p.patches(false)
		if err != nil {
			return r, err
		}
		r.patches = patches1 - patches0
		p.stop()
	} else {
		p.stop()
		patches1, err := p.patches(true)
		if err != nil {
			return r, err
		}
		r.patches = patches1 - patches0
	}
	if r.left > 0 {
		b.tracker.forget()
	}
	return r, ctx.Err()
}

// patches is what the variant patched: kreact's count, read while it
// runs; the bare controllers' own, which they print when they stop
// (before, nothing).
func (m *manyProcess) patches(stopped bool) (int64, error) {
	if m.metricsAddr != "" {
		return scrapeMetric(m.metricsAddr, "kreact_actions_total", `verb="patch"`)
	}
	if !stopped {
		return 0, nil
	}
	var sum int64
	for _, c := range m.procs {
		n, err := c.barePatches()
		if err != nil {
			return 0, err
		}
		sum += n
	}
	return sum, nil
}

func sumCPU(pids []int) (float64, error) {
	var sum float64
	for _, pid := range pids {
		c, err := benchstat.CPUSeconds(pid)
		if err != nil {
			return 0, err
		}
		sum += c
	}
	return sum, nil
}

// runManyRules runs the phase: setup, then each repeat runs every
// variant in a fresh process, the order rotated by one each repeat.
func runManyRules(ctx context.Context, b *manyBench) ([]manyRun, error) {
	fmt.Fprintf(os.Stderr, "many rules: creating %d objects over %d resources and %d rules\n", b.plan.objects, len(manyResources), b.plan.rules)
	if err := setupMany(ctx, b); err != nil {
		return nil, fmt.Errorf("many rules: %w", err)
	}
	if err := b.writeRules(); err != nil {
		return nil, err
	}
	var runs []manyRun
	for rep := range b.repeats {
		order := slices.Clone(b.variants)
		k := rep % len(order)
		order = append(order[k:], order[:k]...)
		for _, v := range order {
			fmt.Fprintf(os.Stderr, "many rules, repeat %d: %s\n", rep+1, v)
			r, err := measureMany(ctx, b, v, rep)
			if err != nil {
				return runs, fmt.Errorf("many rules, repeat %d, %s: %w", rep+1, v, err)
			}
			runs = append(runs, r)
			fmt.Fprintf(os.Stderr, "  %s: %d watches, %d writes, %d patches, %d left, CPU %.2f s (%.3f ms a reaction), peak %s, steady %s\n",
				v, r.watches, r.writes, r.patches, r.left, r.cpu, r.cpuPerReaction(), mib(r.hwm), mib(r.rss))
		}
	}
	return runs, nil
}

// cpuPerReaction is the variant's CPU milliseconds per reaction asked
// for: per write and rule that selects the written object. Not per
// patch: a controller that patches twice for one write (the bare ones do,
// reading a cache that has not yet seen their last patch) or once for two
// (coalescing) has not reacted more or less.
func (r manyRun) cpuPerReaction() float64 { return 1000 * ratio(r.cpu, float64(r.reactionsAsked)) }

// manyReport writes every run, then per variant the medians (min–max),
// then the ratios that the issue asks for, taken per repeat.
func manyReport(w io.Writer, b *manyBench, runs []manyRun) {
	fmt.Fprintln(w, "| repeat | variant | processes | watches opened | to ready | writes | patches | left | p50 | p99 | CPU s | CPU ms / reaction | peak RSS | steady RSS | CPU ms after the drain |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range runs {
		fmt.Fprintf(w, "| %d | %s | %d | %d | %s | %d | %d | %d | %s | %s | %.2f | %.3f | %s | %s | %.0f |\n", r.repeat+1, r.variant, r.processes, r.watches,
			r.startup.Round(10*time.Millisecond), r.writes, r.patches, r.left, round(r.p50), round(r.p99), r.cpu, r.cpuPerReaction(), mib(r.hwm), mib(r.rss), 1000*r.settleCPU)
	}
	by := map[string]map[int]manyRun{}
	for _, r := range runs {
		if by[r.variant] == nil {
			by[r.variant] = map[int]manyRun{}
		}
		by[r.variant][r.repeat] = r
	}
	cell := func(xs []float64, unit func(float64) string) string {
		med, lo, hi := spread(xs)
		return fmt.Sprintf("%s (%s–%s)", unit(med), unit(lo), unit(hi))
	}
	ms := func(v float64) string { return fmt.Sprintf("%.3f", v) }
	mb := func(v float64) string { return fmt.Sprintf("%.1f MiB", v/(1<<20)) }
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| variant | CPU ms / reaction | peak RSS | steady RSS | watches opened | left unreacted | CPU ms after the drain | repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	for _, v := range b.variants {
		var cpu, hwm, rss, watches, left, settle []float64
		for _, r := range by[v] {
			cpu = append(cpu, r.cpuPerReaction())
			settle = append(settle, 1000*r.settleCPU)
			hwm = append(hwm, float64(r.hwm))
			rss = append(rss, float64(r.rss))
			watches = append(watches, float64(r.watches))
			left = append(left, float64(r.left))
		}
		count := func(v float64) string { return fmt.Sprintf("%.0f", v) }
		fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %s | %s | %d |\n", v, cell(cpu, ms), cell(hwm, mb), cell(rss, mb), cell(watches, count), cell(left, count), cell(settle, count), len(by[v]))
	}
	n := strconv.Itoa(b.plan.rules)
	pairs := [][2]string{
		{"kreact-" + n, "kreact-1"}, {"kreact-" + n, "bare-" + n}, {"kreact-" + n, "bareprocs-" + n},
		{"kreact-" + n, "base-" + n}, {"kreact-1", "base-1"}, {"base-" + n, "base-1"},
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| ratio | CPU / reaction | peak RSS | steady RSS | repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|")
	times := func(v float64) string { return fmt.Sprintf("%.2f×", v) }
	for _, pr := range pairs {
		a, c := by[pr[0]], by[pr[1]]
		if len(a) == 0 || len(c) == 0 {
			continue
		}
		var cpu, hwm, rss []float64
		for rep, ra := range a {
			rc, ok := c[rep]
			if !ok {
				continue
			}
			cpu = append(cpu, ratio(ra.cpuPerReaction(), rc.cpuPerReaction()))
			hwm = append(hwm, ratio(float64(ra.hwm), float64(rc.hwm)))
			rss = append(rss, ratio(float64(ra.rss), float64(rc.rss)))
		}
		fmt.Fprintf(w, "| %s / %s | **%s** | %s | **%s** | %d |\n", pr[0], pr[1], cell(cpu, times), cell(hwm, times), cell(rss, times), len(cpu))
	}
	for _, v := range []string{"kreact", "base"} {
		a, c := by[v+"-"+n], by[v+"-1"]
		var steady, peak []float64
		for rep, ra := range a {
			if rc, ok := c[rep]; ok && b.plan.rules > 1 {
				steady = append(steady, float64(ra.rss-rc.rss)/float64(b.plan.rules-1))
				peak = append(peak, float64(ra.hwm-rc.hwm)/float64(b.plan.rules-1))
			}
		}
		if len(steady) > 0 {
			kib := func(v float64) string { return fmt.Sprintf("%.0f KiB", v/1024) }
			fmt.Fprintf(w, "\n%s: memory per rule beyond the first, steady %s, peak %s (%d repeats)\n", v, cell(steady, kib), cell(peak, kib), len(steady))
		}
	}
}

// manySettingsLine describes the phase, to print above its tables.
func manySettingsLine(b *manyBench, cores int, goVersion string) string {
	p := b.plan
	return strings.Join([]string{
		fmt.Sprintf("%d rules on configmaps, secrets and a CRD's widgets (rule j on resource j%%3), %d objects spread evenly, each selected by %d rules (label %s in each rule's spec.watch[].labelSelector, and in each bare controller's informer)", p.rules, p.objects, p.perWrite, manyGroupLabel),
		"each rule keeps fields [seq, one of five others], ignores annotation changes, mirrors seq into its own annotation by merge patch; one rule: rule 0, writes only to its objects",
		fmt.Sprintf("load %v at %g reactions/s (writes/s = that / rules per write), then drain; steady RSS %v after", b.load, b.rate, b.settle),
		fmt.Sprintf("bare: %d worker(s) per controller, its own dynamic informer with the selector and its own workqueue; bare-N: one process, bareprocs-N: a process each", b.bareWorkers),
		fmt.Sprintf("client QPS %g burst %d (kreact: the process's; bare: each controller's)", b.qps, b.burst),
		fmt.Sprintf("%d repeats, variants rotated", b.repeats),
		fmt.Sprintf("%d cores", cores), goVersion,
	}, ", ")
}

// runBareMany runs the bare controllers of specFile named by only, in
// this process. It prints "synced" when every one has synced, and
// "patches N" when SIGTERM stops it.
func runBareMany(specFile, only, kubeconfig string, workers int, qps float64, burst int) error {
	data, err := os.ReadFile(specFile)
	if err != nil {
		return err
	}
	var specs []manyBareSpec
	if err := json.Unmarshal(data, &specs); err != nil {
		return fmt.Errorf("%s: %w", specFile, err)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.QPS, cfg.Burst = float32(qps), burst
	cfg.UserAgent = "bench-bare-many"
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var patches atomic.Int64
	var wg sync.WaitGroup
	var synced []cache.InformerSynced
	var queues []workqueue.TypedRateLimitingInterface[string]
	for s := range strings.SplitSeq(only, ",") {
		j, err := strconv.Atoi(s)
		if err != nil || j < 0 || j >= len(specs) {
			return fmt.Errorf("-bare-only: %q", s)
		}
		spec := specs[j]
		// Each controller its own client, informer and queue, as a
		// separate operator would have.
		client, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return err
		}
		res := manyResources[spec.Resource]
		informer := cgdynamicinformer.NewFilteredDynamicInformer(client, res.gvr, manyNamespace, 0, cache.Indexers{},
			func(o *metav1.ListOptions) { o.LabelSelector = spec.Selector })
		queue := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[string]())
		queues = append(queues, queue)
		enqueue := func(obj any) {
			if key, err := cache.MetaNamespaceKeyFunc(obj); err == nil {
				queue.Add(key)
			}
		}
		_, _ = informer.Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    enqueue,
			UpdateFunc: func(_, obj any) { enqueue(obj) },
		})
		go informer.Informer().Run(ctx.Done())
		synced = append(synced, informer.Informer().HasSynced)
		for range workers {
			wg.Go(func() {
				for {
					key, shutdown := queue.Get()
					if shutdown {
						return
					}
					err := reconcileMany(ctx, client, res, informer.Lister(), key, spec.Annotation, &patches)
					if err != nil && ctx.Err() == nil {
						queue.AddRateLimited(key)
					} else {
						queue.Forget(key)
					}
					queue.Done(key)
				}
			})
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return fmt.Errorf("caches did not sync")
	}
	fmt.Println("synced")
	<-ctx.Done()
	for _, q := range queues {
		q.ShutDown()
	}
	wg.Wait()
	fmt.Printf("patches %d\n", patches.Load())
	return nil
}

// reconcileMany mirrors seq of one object, read from the informer's
// cache, into the controller's annotation.
func reconcileMany(ctx context.Context, client dynamic.Interface, res manyResource, lister cache.GenericLister, key, annotation string, patches *atomic.Int64) error {
	namespace, name, err := cache.SplitMetaNamespaceKey(key)
	if err != nil {
		return nil
	}
	obj, err := lister.ByNamespace(namespace).Get(name)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	u := obj.(*unstructured.Unstructured)
	seq, ok, _ := unstructured.NestedString(u.Object, res.top, "seq")
	if !ok || u.GetAnnotations()[annotation] == seq {
		return nil
	}
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{annotation: seq}}})
	patches.Add(1)
	_, err = client.Resource(res.gvr).Namespace(namespace).Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// newManyBench checks the phase's flags and makes its setting.
func newManyBench(f flags, kubeconfig string, client dynamic.Interface, cfg *rest.Config) (*manyBench, error) {
	variants, err := parseManyVariants(f.manyVariants, f.manyRules)
	if err != nil {
		return nil, fmt.Errorf("-many-variants: %w", err)
	}
	switch {
	case f.manyRules < 2:
		return nil, fmt.Errorf("-many-rules %d: give at least 2", f.manyRules)
	case f.manyPerWrite < 1 || f.manyPerWrite > f.manyRules/len(manyResources):
		return nil, fmt.Errorf("-many-per-write %d: between 1 and the rules on one resource (%d)", f.manyPerWrite, f.manyRules/len(manyResources))
	case f.manyObjects < len(manyResources)*f.manyRules:
		return nil, fmt.Errorf("-many-objects %d: give at least %d, so that every rule has objects", f.manyObjects, len(manyResources)*f.manyRules)
	case f.manyRepeats < 1 || f.manyRate <= 0 || f.manyLoad <= 0:
		return nil, fmt.Errorf("-many-repeats, -many-rate and -many-load must be positive")
	}
	for _, v := range variants {
		if strings.HasPrefix(v, "base-") && f.manyBase == "" {
			return nil, fmt.Errorf("variant %s needs -many-base", v)
		}
	}
	am, err := newAPIServerMetrics(cfg)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kreact-bench-many-")
	if err != nil {
		return nil, err
	}
	return &manyBench{
		plan: manyPlan{rules: f.manyRules, objects: f.manyObjects, perWrite: f.manyPerWrite},
		rate: f.manyRate, load: f.manyLoad, settle: f.manySettle, timeout: f.drainTimeout, repeats: f.manyRepeats,
		variants: variants, kreact: f.kreact, base: f.manyBase, profile: f.manyProfile, bareWorkers: f.manyBareWorkers,
		qps: f.qps, burst: f.burst, kubeconfig: kubeconfig, client: client, apiserver: am, dir: dir,
	}, nil
}

// parseManyVariants reads the variants, N replaced by the rule count.
func parseManyVariants(s string, rules int) ([]string, error) {
	var vs []string
	for v := range strings.SplitSeq(s, ",") {
		v = strings.ReplaceAll(strings.TrimSpace(v), "N", strconv.Itoa(rules))
		kind, n, ok := strings.Cut(v, "-")
		if !ok || (n != "1" && n != strconv.Itoa(rules)) || !slices.Contains([]string{"kreact", "base", "bare", "bareprocs"}, kind) {
			return nil, fmt.Errorf("%q: want kreact-1, kreact-N, base-1, base-N, bare-N or bareprocs-N", v)
		}
		if slices.Contains(vs, v) {
			return nil, fmt.Errorf("%q twice", v)
		}
		vs = append(vs, v)
	}
	return vs, nil
}
