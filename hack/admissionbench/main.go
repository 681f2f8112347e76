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
	"syscall"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/testcluster"
)

// namespace holds the ConfigMaps of the load, the only namespace both
// webhooks intercept.
const namespace = "admbench"

type flags struct {
	kreact   string
	rates    string
	phase    time.Duration
	warmup   time.Duration
	repeats  int
	workers  int
	webhooks string

	// -bare runs the bare webhook (started by the benchmark).
	bare bool
	addr string
}

func main() {
	var f flags
	flag.StringVar(&f.kreact, "kreact", "bin/kreact", "the kreact binary")
	flag.StringVar(&f.rates, "rates", "50,200", "creates per second of the phases")
	flag.DurationVar(&f.phase, "phase", 20*time.Second, "measured length of each phase")
	flag.DurationVar(&f.warmup, "warmup", 3*time.Second, "load before each phase's measured part, not measured")
	flag.IntVar(&f.repeats, "repeats", 3, "runs of the whole set of phases")
	flag.IntVar(&f.workers, "workers", 4, "spec.workers of kreact's rule: runtimes that answer reviews at once")
	flag.StringVar(&f.webhooks, "webhooks", "kreact,bare,none", "webhooks to measure (none: no webhook configured)")
	flag.BoolVar(&f.bare, "bare", false, "run the bare webhook (internal)")
	flag.StringVar(&f.addr, "addr", "", "address of the bare webhook (internal)")
	flag.Parse()
	if f.bare {
		if err := runBare(f.addr); err != nil {
			fmt.Fprintln(os.Stderr, "bare:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(f); err != nil {
		fmt.Fprintln(os.Stderr, "admissionbench:", err)
		os.Exit(1)
	}
}

func run(f flags) error {
	rates, err := parseRates(f.rates)
	if err != nil {
		return fmt.Errorf("-rates: %w", err)
	}
	webhooks := strings.Split(f.webhooks, ",")
	for _, w := range webhooks {
		if !slices.Contains([]string{"kreact", "bare", "none"}, w) {
			return fmt.Errorf("-webhooks: unknown webhook %q", w)
		}
	}
	if f.repeats < 1 {
		return fmt.Errorf("-repeats: want at least 1")
	}
	if _, err := os.Stat(f.kreact); err != nil {
		return fmt.Errorf("kreact binary: %w (run make build)", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()

	fmt.Fprintln(os.Stderr, "starting the control plane")
	cluster, err := testcluster.Start(testcluster.Options{})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	cfg := cluster.Config()
	// The load must not wait on the client's rate limiter.
	cfg.QPS, cfg.Burst = 5000, 10000
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create namespace: %w", err)
	}
	dir, err := os.MkdirTemp("", "admissionbench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	b := &bench{client: client, kubeconfig: cluster.KubeconfigPath(), kreact: f.kreact, workers: f.workers}
	if b.ruleDir, err = writeRule(dir, f.workers); err != nil {
		return err
	}
	if b.bareConfig, err = bareConfiguration(ctx, f.kreact, b.ruleDir, b.kubeconfig); err != nil {
		return err
	}

	var results []result
	turn := 0
	for rep := range f.repeats {
		for _, rate := range rates {
			// Rotate which webhook goes first, so that none always
			// meets a warmer or a more tired API server.
			order := slices.Clone(webhooks)
			k := turn % len(order)
			order = append(order[k:], order[:k]...)
			turn++
			for _, w := range order {
				fmt.Fprintf(os.Stderr, "repeat %d, %g/s: %s\n", rep+1, rate, w)
				r, err := b.measure(ctx, w, rate, rep+1, f.warmup, f.phase)
				if err != nil {
					return fmt.Errorf("repeat %d, %g/s, %s: %w", rep+1, rate, w, err)
				}
				fmt.Fprintf(os.Stderr, "  p50 %s, p99 %s, %d refused, %d failed, %d wrong\n", round(r.p50), round(r.p99), r.denied, r.failed, r.wrong)
				results = append(results, r)
			}
		}
	}
	if err := b.deleteConfigurations(ctx); err != nil {
		return err
	}

	fmt.Println(settingsLine(rates, f.phase, f.warmup, f.repeats, f.workers, runtime.NumCPU(), runtime.Version()))
	fmt.Println()
	report(os.Stdout, results)
	fmt.Println()
	summaryReport(os.Stdout, summarize(results))
	return nil
}

// parseRates reads a list of rates per second separated by commas.
func parseRates(s string) ([]float64, error) {
	var rates []float64
	for r := range strings.SplitSeq(s, ",") {
		r = strings.TrimSpace(r)
		if r == "" {
			continue
		}
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("%q is not a rate", r)
		}
		rates = append(rates, v)
	}
	if len(rates) == 0 {
		return nil, fmt.Errorf("no rate")
	}
	return rates, nil
}
