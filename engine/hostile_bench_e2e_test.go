//go:build e2e

package engine_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// BenchmarkHostileNeighbours measures what hostile rules cost a good one:
// the latency, from the write to the moment a watch sees the annotation,
// of a rule that annotates each of 200 new ConfigMaps, alone and then
// beside each hostile script of issue 10 (hostileScripts) in a rule of
// its own, in the same run. It reports both p99s and their ratio
// (hostile/quiet); issue 10 asks for at most 1.5. ConfigMaps are created
// one every 20ms, so that latency is measured rather than a backlog.
//
//	go test -tags e2e ./engine -run '^$' -bench HostileNeighbours -benchtime 1x
func BenchmarkHostileNeighbours(b *testing.B) {
	const n, every = 200, 20 * time.Millisecond
	ctx, cancel := context.WithCancel(b.Context())
	defer cancel()
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	stack, err := kube.Start(ctx, cluster.Config(), kube.Options{Logger: logger})
	if err != nil {
		b.Fatal(err)
	}
	e := engine.New(stack.REST, stack.Mapper, stack.Informers, stack.Discovery, engine.Options{Logger: logger})
	done := make(chan struct{})
	go func() { _ = e.Run(ctx); close(done) }()
	defer func() { cancel(); <-done; _ = stack.Wait() }()

	load := func(yaml string) {
		rs, err := rules.Parse("rules.yaml", []byte(yaml))
		if err != nil {
			b.Fatal(err)
		}
		if err := e.Load(ctx, rs); err != nil {
			b.Fatal(err)
		}
		testcluster.Eventually(b, "rules to sync", e.Synced)
	}
	// phase creates n ConfigMaps in a new namespace that the rules in
	// yaml (given the namespace) watch, and returns each one's latency.
	phase := func(ns string, yaml func(ns string) string) []time.Duration {
		nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
		if _, err := stack.Client.Resource(namespaces).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		load(yaml(ns))
		cms := stack.Client.Resource(configMaps).Namespace(ns)
		w, err := cms.Watch(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		defer w.Stop()
		var mu sync.Mutex
		created := map[string]time.Time{}
		var latencies []time.Duration
		all := make(chan struct{})
		go func() {
			seen := map[string]bool{}
			for ev := range w.ResultChan() {
				at := time.Now()
				cm, ok := ev.Object.(*unstructured.Unstructured)
				if !ok || ev.Type != watch.Modified || seen[cm.GetName()] || cm.GetAnnotations()["good"] != "yes" {
					continue
				}
				seen[cm.GetName()] = true
				mu.Lock()
				latencies = append(latencies, at.Sub(created[cm.GetName()]))
				full := len(latencies) == n
				mu.Unlock()
				if full {
					close(all)
					return
				}
			}
		}()
		tick := time.NewTicker(every)
		defer tick.Stop()
		for i := range n {
			<-tick.C
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
			cm.SetName(fmt.Sprintf("cm-%03d", i))
			mu.Lock()
			created[cm.GetName()] = time.Now()
			mu.Unlock()
			if _, err := cms.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		select {
		case <-all:
		case <-time.After(5 * time.Minute):
			b.Fatalf("%s: not every ConfigMap annotated after 5 minutes", ns)
		}
		// The hostile rules stop here, before the next phase.
		load("")
		return latencies
	}

	var quiet, hostile []time.Duration
	b.ResetTimer()
	for i := range b.N {
		quiet = append(quiet, phase(fmt.Sprintf("quiet-%d", i), func(ns string) string { return annotateRule("good", ns) })...)
		hostile = append(hostile, phase(fmt.Sprintf("hostile-%d", i), func(ns string) string {
			yaml := annotateRule("good", ns)
			for _, s := range hostileScripts {
				yaml += "---\n" + hogRule(s.name, ns, s.timeout, s.body)
			}
			return yaml
		})...)
	}
	b.StopTimer()
	qp50, qp99 := percentile(quiet, 0.50), percentile(quiet, 0.99)
	hp50, hp99 := percentile(hostile, 0.50), percentile(hostile, 0.99)
	b.ReportMetric(float64(qp50.Microseconds())/1e3, "quiet-p50-ms")
	b.ReportMetric(float64(qp99.Microseconds())/1e3, "quiet-p99-ms")
	b.ReportMetric(float64(hp50.Microseconds())/1e3, "hostile-p50-ms")
	b.ReportMetric(float64(hp99.Microseconds())/1e3, "hostile-p99-ms")
	b.ReportMetric(float64(hp99)/float64(qp99), "hostile/quiet-p99")
	b.ReportMetric(0, "ns/op")
}

// percentile returns the p-th quantile of ds (nearest rank).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(p*float64(len(s))+0.5) - 1
	return s[min(max(i, 0), len(s)-1)]
}
