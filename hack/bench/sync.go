package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/hack/internal/benchstat"
)

// payloadSize is the size of each sync ConfigMap's data.payload.
const payloadSize = 1024

// setupSync creates namespace with n ConfigMaps of a payloadSize payload,
// half by server-side apply (so they carry an Apply entry in
// managedFields, as objects of real clusters do) and half by a plain
// create. Their annotation already mirrors data.seq, so that the
// controllers have nothing to write: the phase measures the sync alone.
func setupSync(ctx context.Context, client dynamic.Interface, namespace string, n int) error {
	ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": namespace}}}
	if _, err := client.Resource(namespaces).Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return err
	}
	var done atomic.Int64
	stop := progress(10*time.Second, func(elapsed time.Duration) string {
		d := done.Load()
		return fmt.Sprintf("  %d of %d created in %s (%.0f/s)", d, n, elapsed.Round(time.Second), float64(d)/elapsed.Seconds())
	})
	defer stop()
	return parallel(32, n, func(i int) error {
		name := objectName(i)
		cm := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": name, "namespace": namespace, "annotations": map[string]any{annotation: "0"}},
			"data":     map[string]any{"seq": "0", "payload": payload(i)},
		}}
		var err error
		if i%2 == 0 {
			_, err = client.Resource(configMaps).Namespace(namespace).Apply(ctx, name, cm, metav1.ApplyOptions{FieldManager: "bench-apply", Force: true})
		} else {
			_, err = client.Resource(configMaps).Namespace(namespace).Create(ctx, cm, metav1.CreateOptions{})
		}
		if err != nil {
			return fmt.Errorf("create %s: %w", name, err)
		}
		done.Add(1)
		return nil
	})
}

// payload returns object i's payload: letters drawn from a generator
// seeded by i, so that it compresses like data, not like a run of one
// byte (the API server gzips large lists).
func payload(i int) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	r := rand.New(rand.NewPCG(uint64(i), 0))
	b := make([]byte, payloadSize)
	for j := range b {
		b[j] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// syncResult is one controller's figures for one initial sync.
type syncResult struct {
	objects, repeat int
	controller      string
	// sync is from the process's start to its readiness.
	sync time.Duration
	// cpuReady is the CPU seconds to readiness; cpuWindow those from
	// readiness to the end of the window.
	cpuReady, cpuWindow float64
	// hwmReady is VmHWM at readiness; hwm VmHWM at the end of the window,
	// the peak over the whole run; rss VmRSS at the end of the window.
	hwmReady, hwm, rss int64
	patches            int64
	// explain is how long one kreact explain answer took at readiness,
	// with -explain; zero otherwise.
	explain time.Duration
}

// measureSync starts one controller on namespace, waits for it to be
// ready, then for window more.
func measureSync(ctx context.Context, name string, f flags, s settings, namespace string, objects, repeat int) (syncResult, error) {
	return measureSyncAt(ctx, name, f, s, namespace, objects, repeat, nil)
}

// measureSyncAt is measureSync that also calls atReady, if not nil, once
// the controller is ready (before the window), and prints the controller's
// memory every ten seconds while it syncs.
func measureSyncAt(ctx context.Context, name string, f flags, s settings, namespace string, objects, repeat int, atReady func(*controller) error) (syncResult, error) {
	r := syncResult{objects: objects, repeat: repeat, controller: name}
	start := time.Now()
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
	stopProgress := waitProgress(name, c.cmd.Process.Pid)
	err = c.waitReady(ctx, f.syncTimeout)
	stopProgress()
	if err != nil {
		return r, err
	}
	r.sync = time.Since(start)
	if c.explainAddr != "" {
		// One answer about one object among all those cached: a lookup
		// per informer and a scan of each rule's trace.
		asked := time.Now()
		if _, err := explain.Ask(ctx, c.explainAddr, "configmaps", namespace, objectName(0)); err != nil {
			return r, fmt.Errorf("kreact explain: %w", err)
		}
		r.explain = time.Since(asked)
	}
	pid := c.cmd.Process.Pid
	if r.cpuReady, err = benchstat.CPUSeconds(pid); err != nil {
		return r, err
	}
	if r.hwmReady, _, err = benchstat.Memory(pid); err != nil {
		return r, err
	}
	if atReady != nil {
		if err := atReady(c); err != nil {
			return r, err
		}
	}
	select {
	case <-time.After(f.syncWindow):
	case <-ctx.Done():
		return r, ctx.Err()
	}
	cpu, err := benchstat.CPUSeconds(pid)
	if err != nil {
		return r, err
	}
	r.cpuWindow = cpu - r.cpuReady
	if r.hwm, r.rss, err = benchstat.Memory(pid); err != nil {
		return r, err
	}
	r.patches, err = c.stopCountingPatches()
	stopped = true
	if err != nil {
		return r, err
	}
	return r, nil
}

// parseSizes reads a comma-separated list of object counts; empty and "0"
// mean none.
func parseSizes(s string) ([]int, error) {
	var sizes []int
	for f := range strings.SplitSeq(s, ",") {
		f = strings.TrimSpace(f)
		if f == "" || f == "0" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 0 {
			return nil, fmt.Errorf("%q is not a number of objects", f)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}

// spread returns the median, the smallest and the largest of xs, or zeros
// for none.
func spread(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}

// syncReport writes every run, then, per size, each controller's medians
// and each kreact's ratios to the bare controller (kreact, and
// kreact-base with -kreact-base), taken per repeat (the runs of a repeat
// are next to each other in time), as median (min–max). The whole run's
// CPU is the one to compare: the bare controller starts its workers once
// synced, so it reconciles the initial adds after ready, where kreact's
// workers take them while the list is still arriving.
func syncReport(w io.Writer, results []syncResult) {
	fmt.Fprintln(w, "| objects | repeat | controller | sync | CPU s to ready | peak RSS at ready | peak RSS | steady RSS | CPU s after ready | patches |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	for _, r := range results {
		fmt.Fprintf(w, "| %d | %d | %s | %s | %.2f | %s | %s | %s | %.2f | %d |\n", r.objects, r.repeat+1, r.controller,
			r.sync.Round(10*time.Millisecond), r.cpuReady, mib(r.hwmReady), mib(r.hwm), mib(r.rss), r.cpuWindow, r.patches)
	}
	var sizes []int
	var names []string                               // in the order of syncControllerOrder
	runs := map[int]map[int]map[string]*syncResult{} // by size, repeat, controller
	for i := range results {
		r := &results[i]
		if runs[r.objects] == nil {
			runs[r.objects] = map[int]map[string]*syncResult{}
			sizes = append(sizes, r.objects)
		}
		if runs[r.objects][r.repeat] == nil {
			runs[r.objects][r.repeat] = map[string]*syncResult{}
		}
		runs[r.objects][r.repeat][r.controller] = r
		if !slices.Contains(names, r.controller) {
			names = append(names, r.controller)
		}
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(syncControllerOrder(a), syncControllerOrder(b)) })
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| objects | | sync | CPU s to ready | CPU s, whole run | peak RSS | steady RSS | repeats |")
	fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	metrics := []func(r *syncResult) float64{
		func(r *syncResult) float64 { return r.sync.Seconds() },
		func(r *syncResult) float64 { return r.cpuReady },
		func(r *syncResult) float64 { return r.cpuReady + r.cpuWindow },
		func(r *syncResult) float64 { return float64(r.hwm) },
		func(r *syncResult) float64 { return float64(r.rss) },
	}
	units := []func(float64) string{
		func(v float64) string { return fmt.Sprintf("%.1f s", v) },
		func(v float64) string { return fmt.Sprintf("%.2f", v) },
		func(v float64) string { return fmt.Sprintf("%.2f", v) },
		func(v float64) string { return mib(int64(v)) },
		func(v float64) string { return mib(int64(v)) },
	}
	for _, size := range sizes {
		var repeats []int
		for rep := range runs[size] {
			repeats = append(repeats, rep)
		}
		slices.Sort(repeats)
		for _, name := range names {
			cells := []string{}
			n := 0
			for m, metric := range metrics {
				var xs []float64
				for _, rep := range repeats {
					if r := runs[size][rep][name]; r != nil {
						xs = append(xs, metric(r))
					}
				}
				med, _, _ := spread(xs)
				cells = append(cells, units[m](med))
				n = len(xs)
			}
			fmt.Fprintf(w, "| %d | %s, median | %s | %d |\n", size, name, strings.Join(cells, " | "), n)
		}
		for _, name := range names {
			if name == "bare" {
				continue
			}
			cells := []string{}
			n := 0
			for _, metric := range metrics {
				var xs []float64
				for _, rep := range repeats {
					k, bare := runs[size][rep][name], runs[size][rep]["bare"]
					if k != nil && bare != nil && metric(bare) != 0 {
						xs = append(xs, metric(k)/metric(bare))
					}
				}
				med, lo, hi := spread(xs)
				cells = append(cells, fmt.Sprintf("**%.2f×** (%.2f–%.2f)", med, lo, hi))
				n = len(xs)
			}
			fmt.Fprintf(w, "| %d | %s/bare, median (min–max) | %s | %d |\n", size, name, strings.Join(cells, " | "), n)
		}
	}
}

// syncControllerOrder places kreact first, then other kreact builds,
// then the bare controller, in the reports.
func syncControllerOrder(name string) int {
	switch name {
	case "kreact":
		return 0
	case "bare":
		return 2
	}
	return 1
}

// syncSettingsLine describes the sync phase, to print above its tables.
func syncSettingsLine(sizes []int, repeats int, window time.Duration, s settings, cores int, goVersion string) string {
	counts := make([]string, len(sizes))
	for i, n := range sizes {
		counts[i] = strconv.Itoa(n)
	}
	return strings.Join([]string{
		fmt.Sprintf("initial sync of %s ConfigMaps (%d B payload, half created by server-side apply, half by create; annotation already mirrored, so no patches)", strings.Join(counts, " and "), payloadSize),
		fmt.Sprintf("%d repeats, alternating which controller goes first", repeats),
		fmt.Sprintf("steady RSS %v after ready", window),
		fmt.Sprintf("workers %d", s.workers),
		fmt.Sprintf("client QPS %g burst %d", s.qps, s.burst),
		s.describeFields(),
		gcSettings(),
		fmt.Sprintf("%d cores", cores),
		goVersion,
	}, ", ")
}

// gcSettings names the GOGC and GOMEMLIMIT the controllers inherit.
func gcSettings() string {
	return "GOGC " + cmp.Or(os.Getenv("GOGC"), "unset") + ", GOMEMLIMIT " + cmp.Or(os.Getenv("GOMEMLIMIT"), "unset")
}

// explainReport writes, with -explain, how long kreact took to answer
// one kreact explain at readiness, with every object cached.
func explainReport(w io.Writer, results []syncResult) {
	first := true
	for _, r := range results {
		if r.explain == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\n| objects | repeat | kreact explain answer |")
			fmt.Fprintln(w, "|---|---|---|")
			first = false
		}
		fmt.Fprintf(w, "| %d | %d | %s |\n", r.objects, r.repeat+1, r.explain.Round(100*time.Microsecond))
	}
}
