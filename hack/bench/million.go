package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/hack/internal/benchstat"
)

// millionEtcdQuota is etcd's backend quota for the million phase: a
// million 1 KiB ConfigMaps take about 1.5 GB of etcd's database, past its
// default quota of 2 GiB once the bare controller's objects, the
// revisions kept until the next compaction and bbolt's free pages are
// added.
const millionEtcdQuota = 8 << 30

// setupMillion creates namespace with n ConfigMaps of a payloadSize
// payload, as setupSync does but by plain creates only, in protobuf (the
// API server decodes it for a fraction of JSON's CPU), from workers
// clients at once. It prints the count and rate every ten seconds and
// returns the whole creation's time.
func setupMillion(ctx context.Context, cfg *rest.Config, namespace string, n, workers int) (time.Duration, error) {
	cfg = rest.CopyConfig(cfg)
	cfg.ContentType = runtime.ContentTypeProtobuf
	cfg.AcceptContentTypes = runtime.ContentTypeProtobuf + "," + runtime.ContentTypeJSON
	cfg.QPS, cfg.Burst = -1, 0 // no client-side limit: the server is the bound
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return 0, err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}
	if _, err := client.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return 0, fmt.Errorf("create namespace %s: %w", namespace, err)
	}
	var done atomic.Int64
	start := time.Now()
	stop := progress(10*time.Second, func(elapsed time.Duration) string {
		d := done.Load()
		return fmt.Sprintf("  %d of %d created in %s (%.0f/s)", d, n, elapsed.Round(time.Second), float64(d)/elapsed.Seconds())
	})
	defer stop()
	err = parallel(workers, n, func(i int) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		cm := &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: objectName(i), Namespace: namespace, Annotations: map[string]string{annotation: "0"}},
			Data:       map[string]string{"seq": "0", "payload": payload(i)},
		}
		if _, err := client.CoreV1().ConfigMaps(namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create %s: %w", cm.Name, err)
		}
		done.Add(1)
		return nil
	})
	return time.Since(start), err
}

// progress prints line(elapsed) to stderr every interval until the
// returned function is called.
func progress(interval time.Duration, line func(elapsed time.Duration) string) (stop func()) {
	start := time.Now()
	quit := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				fmt.Fprintln(os.Stderr, line(time.Since(start)))
			}
		}
	}()
	return func() { close(quit); <-finished }
}

// millionSetup is how long the million phase took to create its objects.
type millionSetup struct {
	namespace string
	objects   int
	took      time.Duration
}

func (s millionSetup) rate() float64 { return float64(s.objects) / s.took.Seconds() }

// runMillion runs the million phase: kreact on n objects, the bare
// controller on bareN (a size it fits in), repeats times each,
// alternating which goes first; with heapDir, kreact's heap profile at
// readiness of each repeat goes there.
func runMillion(ctx context.Context, cfg *rest.Config, f flags, s settings) ([]syncResult, []millionSetup, error) {
	var setups []millionSetup
	sizes := []struct {
		namespace string
		n         int
		who       string
	}{{"bench-million-bare", f.millionBare, "bare"}, {"bench-million", f.million, "kreact"}}
	for _, sz := range sizes {
		fmt.Fprintf(os.Stderr, "creating %d ConfigMaps in %s (for %s)\n", sz.n, sz.namespace, sz.who)
		took, err := setupMillion(ctx, cfg, sz.namespace, sz.n, 64)
		if err != nil {
			return nil, nil, fmt.Errorf("setup %s: %w", sz.namespace, err)
		}
		st := millionSetup{sz.namespace, sz.n, took}
		fmt.Fprintf(os.Stderr, "  created %d in %s (%.0f/s)\n", st.objects, st.took.Round(time.Second), st.rate())
		setups = append(setups, st)
	}
	var results []syncResult
	for rep := range f.millionRepeats {
		order := []string{"kreact", "bare"}
		if rep%2 == 1 {
			order = []string{"bare", "kreact"}
		}
		for _, name := range order {
			namespace, n := "bench-million", f.million
			if name == "bare" {
				namespace, n = "bench-million-bare", f.millionBare
			}
			fmt.Fprintf(os.Stderr, "million, repeat %d: %s on %d\n", rep+1, name, n)
			var atReady func(c *controller) error
			if name == "kreact" && f.millionHeap != "" {
				atReady = func(c *controller) error {
					return heapProfile(c.pprofAddr, filepath.Join(f.millionHeap, fmt.Sprintf("kreact-%d-ready-%d.pprof", n, rep+1)))
				}
			}
			r, err := measureSyncAt(ctx, name, f, s, namespace, n, rep, atReady)
			if err != nil {
				return nil, nil, err
			}
			results = append(results, r)
		}
	}
	return results, setups, nil
}

// heapProfile writes the heap profile served at addr into path.
func heapProfile(addr, path string) error {
	resp, err := http.Get("http://" + addr + "/debug/pprof/heap")
	if err != nil {
		return fmt.Errorf("heap profile: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("heap profile: %s", resp.Status)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// waitProgress prints, every ten seconds until the returned function is
// called, how long the process pid has been syncing and its RSS and peak.
func waitProgress(name string, pid int) (stop func()) {
	return progress(10*time.Second, func(elapsed time.Duration) string {
		hwm, rss, err := benchstat.Memory(pid)
		if err != nil {
			return fmt.Sprintf("  %s: %s, %v", name, elapsed.Round(time.Second), err)
		}
		return fmt.Sprintf("  %s: not ready after %s, RSS %s, peak %s", name, elapsed.Round(time.Second), mib(rss), mib(hwm))
	})
}

// millionReport writes every run, then kreact's medians at its size, the
// bare controller's at its own and scaled to kreact's (by the ratio of
// the sizes, labelled so: memory and time grow about linearly with the
// objects), and the ratios against the scaled figures, per repeat, as
// median (min–max); then the setup.
func millionReport(w io.Writer, results []syncResult, setups []millionSetup) {
	fmt.Fprintln(w, "| objects | repeat | controller | sync | CPU s to ready | peak RSS at ready | peak RSS | steady RSS | CPU s after ready | patches |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %.2f | %s | %s | %s | %.2f | %d |\n", r.objects, r.repeat+1, r.controller,
			r.sync.Round(10*time.Millisecond), r.cpuReady, mib(r.hwmReady), mib(r.hwm), mib(r.rss), r.cpuWindow, r.patches)
	}
	var kreact, bare []*syncResult
	byRepeat := map[int][2]*syncResult{}
	for i := range results {
		r := &results[i]
		p := byRepeat[r.repeat]
		switch r.controller {
		case "kreact":
			kreact = append(kreact, r)
			p[0] = r
		case "bare":
			bare = append(bare, r)
			p[1] = r
		}
		byRepeat[r.repeat] = p
	}
	metrics := []struct {
		name string
		get  func(r *syncResult) float64
		unit func(float64) string
	}{
		{"sync", func(r *syncResult) float64 { return r.sync.Seconds() }, func(v float64) string { return fmt.Sprintf("%.1f s", v) }},
		{"CPU s to ready", func(r *syncResult) float64 { return r.cpuReady }, func(v float64) string { return fmt.Sprintf("%.1f", v) }},
		{"CPU s, whole run", func(r *syncResult) float64 { return r.cpuReady + r.cpuWindow }, func(v float64) string { return fmt.Sprintf("%.1f", v) }},
		{"peak RSS", func(r *syncResult) float64 { return float64(r.hwm) }, func(v float64) string { return mib(int64(v)) }},
		{"steady RSS", func(r *syncResult) float64 { return float64(r.rss) }, func(v float64) string { return mib(int64(v)) }},
	}
	kn, bn := 0, 0
	if len(kreact) > 0 {
		kn = kreact[0].objects
	}
	if len(bare) > 0 {
		bn = bare[0].objects
	}
	factor := 0.0
	if bn > 0 {
		factor = float64(kn) / float64(bn)
	}
	fmt.Fprintln(w)
	header := []string{}
	for _, m := range metrics {
		header = append(header, m.name)
	}
	fmt.Fprintf(w, "| | %s | repeats |\n", strings.Join(header, " | "))
	fmt.Fprintf(w, "|---|%s---|\n", strings.Repeat("---|", len(metrics)))
	row := func(label string, rs []*syncResult, scale float64) {
		cells := []string{}
		for _, m := range metrics {
			xs := []float64{}
			for _, r := range rs {
				xs = append(xs, m.get(r)*scale)
			}
			med, lo, hi := spread(xs)
			cells = append(cells, fmt.Sprintf("%s (%s–%s)", m.unit(med), m.unit(lo), m.unit(hi)))
		}
		fmt.Fprintf(w, "| %s | %s | %d |\n", label, strings.Join(cells, " | "), len(rs))
	}
	row(fmt.Sprintf("kreact, %d objects, median (min–max)", kn), kreact, 1)
	if len(bare) > 0 {
		row(fmt.Sprintf("bare, %d objects, median (min–max)", bn), bare, 1)
		row(fmt.Sprintf("bare, %d objects ×%s, **scaled**", bn, strconv.FormatFloat(factor, 'g', -1, 64)), bare, factor)
		cells := []string{}
		n := 0
		for _, m := range metrics {
			xs := []float64{}
			for _, p := range byRepeat {
				if p[0] != nil && p[1] != nil && m.get(p[1]) != 0 {
					xs = append(xs, m.get(p[0])/(m.get(p[1])*factor))
				}
			}
			med, lo, hi := spread(xs)
			cells = append(cells, fmt.Sprintf("**%.2f×** (%.2f–%.2f)", med, lo, hi))
			n = len(xs)
		}
		fmt.Fprintf(w, "| kreact / scaled bare, per repeat, median (min–max) | %s | %d |\n", strings.Join(cells, " | "), n)
	}
	if len(kreact) > 0 {
		peaks := []float64{}
		for _, r := range kreact {
			peaks = append(peaks, float64(r.hwm))
		}
		med, _, hi := spread(peaks)
		verdict := "yes"
		if hi > 1<<30 {
			verdict = "no"
		}
		fmt.Fprintf(w, "\nkreact's peak RSS at %d objects: median %s, largest %s; every repeat ≤ 1 GiB: %s\n", kn, mib(int64(med)), mib(int64(hi)), verdict)
	}
	for _, s := range setups {
		fmt.Fprintf(w, "setup: %d ConfigMaps in %s created in %s (%.0f/s)\n", s.objects, s.namespace, s.took.Round(time.Second), s.rate())
	}
}

// millionSettingsLine describes the million phase, to print above its
// tables.
func millionSettingsLine(f flags, s settings, cores int, goVersion string) string {
	return strings.Join([]string{
		fmt.Sprintf("kreact syncs %d ConfigMaps, the bare controller %d (%d B payload, created by plain creates in protobuf, 64 at once; annotation already mirrored, so no patches)", f.million, f.millionBare, payloadSize),
		fmt.Sprintf("%d repeats on the same objects, alternating which controller goes first", f.millionRepeats),
		fmt.Sprintf("steady RSS %v after ready", f.syncWindow),
		fmt.Sprintf("etcd quota %d GiB", millionEtcdQuota>>30),
		fmt.Sprintf("workers %d", s.workers),
		fmt.Sprintf("client QPS %g burst %d", s.qps, s.burst),
		s.describeFields(),
		gcSettings(),
		fmt.Sprintf("%d cores", cores),
		goVersion,
	}, ", ")
}
