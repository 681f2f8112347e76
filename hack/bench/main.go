package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/hack/internal/benchstat"
	"github.com/kreact/kreact/internal/testcluster"
)

type flags struct {
	kreact string
	// kreactBase, when set, is a second kreact binary the sync phase
	// measures beside kreact (controller kreact-base), and the steady
	// phases when -controllers names it: a before and an after in one
	// run.
	kreactBase                 string
	objects                    int
	rates                      string
	phase                      time.Duration
	burstObjects, burstUpdates int
	workers                    int
	fields                     string
	// explain runs kreact with --explain-address: it keeps every rule's
	// trace, and the sync phase times one kreact explain answer.
	explain      bool
	qps          float64
	burst        int
	drainTimeout time.Duration
	controllers  string
	// profile, when set, is a directory for a CPU profile of each
	// controller over each steady phase.
	profile string

	// The initial sync phase.
	syncObjects             string
	syncRepeats             int
	syncWindow, syncTimeout time.Duration

	// The million phase (million.go).
	million, millionBare, millionRepeats int
	millionHeap                          string

	// The rule-objects phase.
	ruleObjects, ruleNamespaces, ruleRepeats int
	ruleWindow, ruleTimeout                  time.Duration
	ruleCRDs                                 string
	ruleProfile                              string

	// The large-CRD phase (crds.go).
	crds, crdRepeats int
	crdWindow        time.Duration
	crdProfile       string

	// The many-rules phase (manyrules.go).
	manyRules, manyObjects, manyPerWrite, manyRepeats, manyBareWorkers int
	manyRate                                                           float64
	manyLoad, manySettle                                               time.Duration
	manyVariants, manyBase, manyProfile                                string
	// -bare-many runs the many-rules phase's bare controllers (internal).
	bareMany, bareOnly string

	// -bare runs the baseline controller (started by the benchmark);
	// -bare-discovery the large-CRD phase's baseline.
	bare, bareDiscovery   bool
	kubeconfig, namespace string
	pprof                 string
}

func main() {
	var f flags
	flag.StringVar(&f.kreact, "kreact", "bin/kreact", "the kreact binary")
	flag.IntVar(&f.objects, "objects", 1000, "ConfigMaps written by the steady phases")
	flag.StringVar(&f.rates, "rates", "40,200,1000", "writes per second of the steady phases (empty: none)")
	flag.DurationVar(&f.phase, "phase", 30*time.Second, "length of each steady phase")
	flag.IntVar(&f.burstObjects, "burst-objects", 5000, "ConfigMaps of the burst phase")
	flag.IntVar(&f.burstUpdates, "burst-updates", 20000, "updates of the burst phase (0: no burst)")
	flag.IntVar(&f.workers, "workers", 8, "workers of both controllers (kreact: spec.workers and spec.actionWorkers)")
	flag.Float64Var(&f.qps, "qps", 200, "client QPS of both controllers")
	flag.StringVar(&f.fields, "fields", "", "spec.watch[].fields of kreact's rule, e.g. data.seq,metadata.generation,metadata.creationTimestamp (empty: whole objects)")
	flag.BoolVar(&f.explain, "explain", false, "run kreact with --explain-address, which keeps each rule's trace, and time a kreact explain answer after each sync")
	flag.IntVar(&f.burst, "burst", 400, "client burst of both controllers")
	flag.DurationVar(&f.drainTimeout, "drain-timeout", 5*time.Minute, "how long to wait for a controller to catch up after a phase")
	flag.StringVar(&f.controllers, "controllers", "kreact,bare", "controllers to measure")
	flag.StringVar(&f.profile, "profile", "", "directory for a CPU profile of each controller in each steady phase (empty: none)")
	flag.StringVar(&f.kreactBase, "kreact-base", "", "a second kreact binary, controller kreact-base: the sync phase measures it too, and the steady phases when -controllers names it (empty: none)")
	flag.StringVar(&f.syncObjects, "sync-objects", "", "ConfigMaps of each initial sync phase, e.g. 10000,100000 (empty: no sync phase)")
	flag.IntVar(&f.syncRepeats, "sync-repeats", 3, "runs of each controller in each sync phase")
	flag.DurationVar(&f.syncWindow, "sync-window", 20*time.Second, "how long after ready the sync phase reads the steady RSS")
	flag.DurationVar(&f.syncTimeout, "sync-timeout", 10*time.Minute, "how long a controller may take to sync")
	flag.IntVar(&f.million, "million", 0, "ConfigMaps kreact syncs in the million phase, e.g. 1000000, with etcd's quota raised (0: no such phase); give -fields for the 3-field projection")
	flag.IntVar(&f.millionBare, "million-bare", 100000, "ConfigMaps the bare controller syncs in the million phase; its figures are also reported scaled to -million")
	flag.IntVar(&f.millionRepeats, "million-repeats", 3, "runs of each controller in the million phase, on the same objects")
	flag.StringVar(&f.millionHeap, "million-heap", "", "directory for kreact's heap profile at readiness in each million repeat (empty: none)")
	flag.IntVar(&f.ruleObjects, "rule-objects", 0, "rules of the rule-objects phase, as files and as Rule objects, e.g. 1000 (0: no such phase)")
	flag.IntVar(&f.ruleNamespaces, "rule-namespaces", 100, "namespaces the rule-objects phase spreads its rules over")
	flag.IntVar(&f.ruleRepeats, "rule-repeats", 3, "repeats of the rule-objects phase")
	flag.DurationVar(&f.ruleWindow, "rule-window", time.Minute, "how long the rule-objects phase leaves each kreact idle before reading its memory (and counts the objects' status writes after all are Ready)")
	flag.DurationVar(&f.ruleTimeout, "rule-timeout", 10*time.Minute, "how long the rule-objects phase waits for kreact to be ready, or every status to say Ready")
	flag.StringVar(&f.ruleProfile, "rule-profile", "", "directory for a CPU profile of kreact with the rules over each idle window, and a heap profile at its end (empty: none)")
	flag.StringVar(&f.ruleCRDs, "rule-crds", "deploy/crds", "directory of the CRDs of rule objects")
	flag.IntVar(&f.crds, "crds", 0, "large CRDs of the large-CRD phase, e.g. 200 (0: no such phase)")
	flag.IntVar(&f.crdRepeats, "crd-repeats", 3, "starts of each process, without and with the CRDs, in the large-CRD phase")
	flag.DurationVar(&f.crdWindow, "crd-window", 30*time.Second, "how long after ready the large-CRD phase reads the idle RSS")
	flag.StringVar(&f.crdProfile, "crd-profile", "", "directory for a heap profile of each process at the end of each idle window of the large-CRD phase (empty: none)")
	flag.IntVar(&f.manyRules, "many-rules", 0, "rules of the many-rules phase, e.g. 50 (0: no such phase)")
	flag.IntVar(&f.manyObjects, "many-objects", 999, "objects of the many-rules phase, over its three resources")
	flag.IntVar(&f.manyPerWrite, "many-per-write", 3, "rules of the many-rules phase that react to each object")
	flag.IntVar(&f.manyRepeats, "many-repeats", 3, "repeats of the many-rules phase")
	flag.Float64Var(&f.manyRate, "many-rate", 150, "reactions per second of the many-rules phase's load")
	flag.DurationVar(&f.manyLoad, "many-load", 20*time.Second, "length of the many-rules phase's load")
	flag.DurationVar(&f.manySettle, "many-settle", 5*time.Second, "how long after the drain the many-rules phase reads the steady RSS")
	flag.StringVar(&f.manyVariants, "many-variants", "kreact-1,kreact-N,bare-N,bareprocs-N", "variants of the many-rules phase (N: -many-rules; base-1, base-N run -many-base)")
	flag.StringVar(&f.manyBase, "many-base", "", "a second kreact binary for the base-1 and base-N variants")
	flag.IntVar(&f.manyBareWorkers, "many-bare-workers", 1, "workers of each bare controller of the many-rules phase")
	flag.StringVar(&f.manyProfile, "many-profile", "", "directory for a CPU profile of kreact with many rules over each load, and for each kreact its /metrics (read with the steady RSS), heap and goroutine profiles after (empty: none)")
	flag.StringVar(&f.bareMany, "bare-many", "", "run the many-rules phase's bare controllers of this file (internal)")
	flag.StringVar(&f.bareOnly, "bare-only", "", "with -bare-many, the controllers to run (internal)")
	flag.BoolVar(&f.bare, "bare", false, "run the bare controller (internal)")
	flag.BoolVar(&f.bareDiscovery, "bare-discovery", false, "run the large-CRD phase's bare discovery client (internal)")
	flag.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the bare controller (internal)")
	flag.StringVar(&f.namespace, "namespace", "", "namespace of the bare controller (internal)")
	flag.StringVar(&f.pprof, "pprof", "", "address of the bare controller's /debug/pprof/ (internal)")
	flag.Parse()
	if f.bareDiscovery {
		if err := runBareDiscovery(f.kubeconfig, f.namespace, f.pprof, f.qps, f.burst); err != nil {
			fmt.Fprintln(os.Stderr, "bare discovery:", err)
			os.Exit(1)
		}
		return
	}
	if f.bareMany != "" {
		if err := runBareMany(f.bareMany, f.bareOnly, f.kubeconfig, f.workers, f.qps, f.burst); err != nil {
			fmt.Fprintln(os.Stderr, "bare-many:", err)
			os.Exit(1)
		}
		return
	}
	if f.bare {
		if err := runBare(f.kubeconfig, f.namespace, f.pprof, f.workers, f.qps, f.burst); err != nil {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	var rates []float64
	for r := range strings.SplitSeq(f.rates, ",") {
		if strings.TrimSpace(r) == "" {
			continue
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(r), 64)
		if err != nil || v <= 0 {
			return fmt.Errorf("-rates: %q is not a rate", r)
		}
		rates = append(rates, v)
	}
	syncSizes, err := parseSizes(f.syncObjects)
	if err != nil {
		return fmt.Errorf("-sync-objects: %w", err)
	}
	if f.ruleObjects < 0 || f.ruleObjects > 0 && (f.ruleObjects < 2 || f.ruleNamespaces < 1 || f.ruleRepeats < 1) {
		return fmt.Errorf("-rule-objects %d: give at least 2 rules, 1 namespace and 1 repeat", f.ruleObjects)
	}
	if f.crds < 0 || f.crds > 0 && f.crdRepeats < 1 {
		return fmt.Errorf("-crds %d -crd-repeats %d: give a number of CRDs and at least 1 repeat", f.crds, f.crdRepeats)
	}
	if f.million < 0 || f.million > 0 && (f.millionBare < 1 || f.millionRepeats < 1) {
		return fmt.Errorf("-million %d: give at least 1 object to the bare controller (-million-bare) and 1 repeat", f.million)
	}
	controllers := strings.Split(f.controllers, ",")
	if _, err := os.Stat(f.kreact); err != nil {
		return fmt.Errorf("kreact binary: %w (run make build)", err)
	}
	binDir, err := os.MkdirTemp("", "kreact-bench-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(binDir)
	if err := copyBinaries(binDir, &f); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	fmt.Fprintln(os.Stderr, "starting the control plane")
	var clusterOpts testcluster.Options
	if f.million > 0 {
		clusterOpts.EtcdQuotaBytes = millionEtcdQuota
	}
	cluster, err := testcluster.Start(clusterOpts)
	if err != nil {
		return err
	}
	defer cluster.Stop()
	cfg := cluster.Config()
	cfg.QPS, cfg.Burst = 5000, 10000
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	s := settings{kubeconfig: cluster.KubeconfigPath(), workers: f.workers, qps: f.qps, burst: f.burst, fields: f.fields, explain: f.explain}
	var seq atomic.Int64

	type target struct {
		namespace string
		tracker   *tracker
		writer    *writer
	}
	prepare := func(namespace string, objects int) (*target, error) {
		fmt.Fprintf(os.Stderr, "creating %d ConfigMaps in %s\n", objects, namespace)
		if err := setup(ctx, client, namespace, objects); err != nil {
			return nil, fmt.Errorf("setup %s: %w", namespace, err)
		}
		t := newTracker()
		if err := observe(ctx, client, namespace, t); err != nil {
			return nil, err
		}
		return &target{namespace, t, &writer{client: client, namespace: namespace, objects: objects, tracker: t, seq: &seq, locks: make([]sync.Mutex, objects)}}, nil
	}
	var steady *target
	if len(rates) > 0 {
		if steady, err = prepare("bench-steady", f.objects); err != nil {
			return err
		}
	}
	var burst *target
	if f.burstUpdates > 0 {
		if burst, err = prepare("bench-burst", f.burstObjects); err != nil {
			return err
		}
	}

	var results []result
	phaseRun := func(phase string, i int, t *target, load func() (int, time.Duration)) error {
		// Alternate which controller goes first, so that neither always
		// meets a warmer or a more tired API server.
		order := controllers
		if i%2 == 1 {
			order = []string{controllers[len(controllers)-1]}
			order = append(order, controllers[:len(controllers)-1]...)
		}
		for _, name := range order {
			fmt.Fprintf(os.Stderr, "phase %s: %s\n", phase, name)
			r, err := measure(ctx, phase, name, f, s, t.namespace, t.tracker, load)
			if err != nil {
				return err
			}
			results = append(results, r)
		}
		return nil
	}
	for i, rate := range rates {
		err := phaseRun(fmt.Sprintf("%g/s", rate), i, steady, func() (int, time.Duration) {
			return steady.writer.steady(ctx, rate, f.phase)
		})
		if err != nil {
			return err
		}
	}
	if burst != nil {
		err := phaseRun("burst", len(rates), burst, func() (int, time.Duration) {
			start := time.Now()
			burst.writer.burst(ctx, f.burstUpdates)
			return f.burstUpdates, time.Since(start)
		})
		if err != nil {
			return err
		}
	}

	var syncResults []syncResult
	for i, n := range syncSizes {
		namespace := fmt.Sprintf("bench-sync-%d", n)
		fmt.Fprintf(os.Stderr, "creating %d ConfigMaps in %s\n", n, namespace)
		if err := setupSync(ctx, client, namespace, n); err != nil {
			return fmt.Errorf("setup %s: %w", namespace, err)
		}
		syncControllers := controllers
		if f.kreactBase != "" {
			syncControllers = append(slices.Clone(controllers), "kreact-base")
		}
		for rep := range f.syncRepeats {
			order := syncControllers
			if (i*f.syncRepeats+rep)%2 == 1 {
				order = slices.Clone(syncControllers)
				slices.Reverse(order)
			}
			for _, name := range order {
				fmt.Fprintf(os.Stderr, "sync %d, repeat %d: %s\n", n, rep+1, name)
				r, err := measureSync(ctx, name, f, s, namespace, n, rep)
				if err != nil {
					return err
				}
				syncResults = append(syncResults, r)
			}
		}
	}

	var crdResults []crdResult
	if f.crds > 0 {
		if crdResults, err = runCRDPhase(ctx, client, cluster.Config(), f, s, controllers); err != nil {
			return fmt.Errorf("large CRDs: %w", err)
		}
	}
	var millionResults []syncResult
	var millionSetups []millionSetup
	if f.million > 0 {
		if millionResults, millionSetups, err = runMillion(ctx, cluster.Config(), f, s); err != nil {
			return fmt.Errorf("million: %w", err)
		}
	}

	var ruleResults []ruleRepeat
	var rb *ruleBench
	if f.ruleObjects > 0 {
		am, err := newAPIServerMetrics(cluster.Config())
		if err != nil {
			return err
		}
		rb = &ruleBench{n: f.ruleObjects, namespaces: min(f.ruleNamespaces, f.ruleObjects), window: f.ruleWindow, timeout: f.ruleTimeout,
			kreact: f.kreact, kubeconfig: cluster.KubeconfigPath(), client: client, apiserver: am, profile: f.ruleProfile}
		dir, err := os.MkdirTemp("", "kreact-bench-rules-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		fmt.Fprintf(os.Stderr, "creating %d namespaces, the CRDs and %d rules' files\n", rb.namespaces, rb.n)
		if err := setupRules(ctx, rb, f.ruleCRDs, dir); err != nil {
			return fmt.Errorf("rule objects: %w", err)
		}
		for rep := range f.ruleRepeats {
			rr, err := measureRules(ctx, rb, rep)
			if err != nil {
				return fmt.Errorf("rule objects, repeat %d: %w", rep+1, err)
			}
			ruleResults = append(ruleResults, rr)
		}
	}

	var manyRuns []manyRun
	var mb *manyBench
	if f.manyRules > 0 {
		if mb, err = newManyBench(f, cluster.KubeconfigPath(), client, cluster.Config()); err != nil {
			return err
		}
		defer os.RemoveAll(mb.dir)
		if manyRuns, err = runManyRules(ctx, mb); err != nil {
			return err
		}
	}

	if len(results) > 0 {
		fmt.Println(settingsLine(f.objects, f.burstObjects, f.burstUpdates, f.phase, s, runtime.NumCPU(), runtime.Version()))
		fmt.Println()
		report(os.Stdout, results)
		for _, r := range results {
			if r.phase == "burst" {
				fmt.Printf("\nburst, %s: converged %s after the first write (writes took %s)", r.controller,
					(r.loadTime + r.drain).Round(100*time.Millisecond), r.loadTime.Round(100*time.Millisecond))
			}
		}
		fmt.Println()
	}
	if len(syncResults) > 0 {
		if len(results) > 0 {
			fmt.Println()
		}
		fmt.Println(syncSettingsLine(syncSizes, f.syncRepeats, f.syncWindow, s, runtime.NumCPU(), runtime.Version()))
		fmt.Println()
		syncReport(os.Stdout, syncResults)
		explainReport(os.Stdout, syncResults)
	}
	if len(crdResults) > 0 {
		fmt.Println()
		fmt.Println(crdSettingsLine(f.crds, f.crdRepeats, f.crdWindow, s, runtime.NumCPU(), runtime.Version()))
		fmt.Println()
		crdReport(os.Stdout, crdResults)
	}
	if len(millionResults) > 0 {
		if len(results) > 0 || len(syncResults) > 0 || len(crdResults) > 0 {
			fmt.Println()
		}
		fmt.Println(millionSettingsLine(f, s, runtime.NumCPU(), runtime.Version()))
		fmt.Println()
		millionReport(os.Stdout, millionResults, millionSetups)
	}
	if len(ruleResults) > 0 {
		if len(results) > 0 || len(syncResults) > 0 || len(crdResults) > 0 || len(millionResults) > 0 {
			fmt.Println()
		}
		fmt.Println(ruleSettingsLine(rb, len(ruleResults), runtime.NumCPU(), runtime.Version()))
		fmt.Println()
		ruleReport(os.Stdout, rb, ruleResults)
	}
	if len(manyRuns) > 0 {
		fmt.Println()
		fmt.Println(manySettingsLine(mb, runtime.NumCPU(), runtime.Version()))
		fmt.Println()
		manyReport(os.Stdout, mb, manyRuns)
	}
	return nil
}

// startController starts the named controller on namespace.
func startController(name string, f flags, s settings, namespace string) (*controller, error) {
	switch name {
	case "kreact":
		return startKreact(f.kreact, os.TempDir(), namespace, s)
	case "kreact-base":
		return startKreact(f.kreactBase, os.TempDir(), namespace, s)
	case "bare":
		return startBare(namespace, s)
	}
	return nil, fmt.Errorf("unknown controller %q", name)
}

// measure runs one controller through one phase.
func measure(ctx context.Context, phase, name string, f flags, s settings, namespace string, t *tracker,
	load func() (int, time.Duration)) (result, error) {
	r := result{phase: phase, controller: name}
	c, err := startController(name, f, s, namespace)
	if err != nil {
		return r, err
	}
	stopped := false
	defer func() {
		if !stopped {
			c.stop()
		}
	}()
	if err := c.waitReady(ctx, 5*time.Minute); err != nil {
		return r, err
	}
	pid := c.cmd.Process.Pid
	cpu0, err := benchstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	t.takeLatencies()
	profiled := c.profile(f.profile, fmt.Sprintf("%s-%s", strings.ReplaceAll(phase, "/", "per"), name), f.phase)
	r.writes, r.loadTime = load()
	if err := <-profiled; err != nil {
		fmt.Fprintf(os.Stderr, "  profile of %s: %v\n", name, err)
	}
	r.rate = float64(r.writes) / r.loadTime.Seconds()
	end := time.Now()
	for t.outstanding() > 0 && time.Since(end) < f.drainTimeout && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
	}
	r.drain = time.Since(end)
	r.left = t.outstanding()
	lat := t.takeLatencies()
	r.p50, r.p99 = benchstat.Percentile(lat, 50), benchstat.Percentile(lat, 99)
	cpu1, err := benchstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	r.cpu = cpu1 - cpu0
	if r.rss, err = benchstat.PeakRSS(pid); err != nil {
		return r, err
	}
	r.patches, err = c.stopCountingPatches()
	stopped = true
	if err != nil {
		return r, err
	}
	if r.left > 0 {
		t.forget()
	}
	return r, ctx.Err()
}
