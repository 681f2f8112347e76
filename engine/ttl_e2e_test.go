//go:build e2e

package engine_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/resume"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

// Done when of the timers issue (12): 200 ConfigMaps with TTLs between 5 s
// and 60 s are each deleted within 2 s of expiry by the example rule
// examples/ttl-cleanup.yaml, run as it is, while the rule never lists all
// ConfigMaps; and this holds across a kreact restart in the middle.
//
// Expiry is what the rule computes: creationTimestamp (whole seconds, as
// the API server sets it) plus the TTL. A ConfigMap counts as deleted when
// the test's own watch sees it go; each must go no earlier than its expiry
// and at most 2 s after it (the bound, not a speed claim).
//
// "Never lists all ConfigMaps" is checked two ways. Statically: the script
// never calls kreact.list (the only way a script reads many objects) and
// the rule has no spec.every or spec.schedule (no sweep); every call
// receives one object and acts on that object alone. From the API
// server's side: its apiserver_request_total counts cluster-wide LISTs of
// configmaps, and between the first start and the end there are at most
// two per kreact start, whatever the number of timers and deletions: the
// informer's preflight (a list of one object, to report a missing
// permission early) and its initial list, which is how a restart re-arms
// the timers (the restart contract). The test itself only watches, in its
// own namespace.
func TestTTLExampleDeletesOnTimeAcrossRestart(t *testing.T) {
	const (
		n  = 200
		ns = "ttl-e2e"
	)
	ctx := t.Context()
	raw, err := os.ReadFile("../examples/ttl-cleanup.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ruleYAML := string(raw)
	rs, err := rules.Parse("ttl-cleanup.yaml", raw)
	if err != nil || len(rs) != 1 {
		t.Fatalf("parse the example: %d rules, %v", len(rs), err)
	}
	if r := rs[0]; strings.Contains(r.Script, "kreact.list") || r.Every != 0 || r.Schedule != "" {
		t.Fatalf("the TTL example scans: kreact.list in its script %v, spec.every %v, spec.schedule %q",
			strings.Contains(r.Script, "kreact.list"), r.Every, r.Schedule)
	}

	client, err := dynamic.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	nsObj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}}
	if _, err := client.Resource(namespaces).Create(ctx, nsObj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	cms := client.Resource(configMaps).Namespace(ns)

	// The test's record of each deletion, from a watch opened before any
	// ConfigMap exists (and reopened from its last resourceVersion should
	// the server end it).
	var (
		mu      sync.Mutex
		deleted = map[string]time.Time{}
	)
	watchCtx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	w, err := cms.Watch(watchCtx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func(w watch.Interface) {
		rv := ""
		for {
			for ev := range w.ResultChan() {
				now := time.Now()
				if obj, ok := ev.Object.(*unstructured.Unstructured); ok {
					rv = obj.GetResourceVersion()
					if ev.Type == watch.Deleted {
						mu.Lock()
						deleted[obj.GetName()] = now
						mu.Unlock()
					}
				}
			}
			if watchCtx.Err() != nil {
				return
			}
			for {
				var err error
				if w, err = cms.Watch(watchCtx, metav1.ListOptions{ResourceVersion: rv}); err == nil || watchCtx.Err() != nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			if watchCtx.Err() != nil {
				return
			}
		}
	}(w)

	logs := &testcluster.LogBuffer{}
	defer func() {
		if t.Failed() {
			t.Logf("kreact logs:\n%s", logs.String())
		}
	}()
	listsBefore := clusterConfigMapLists(t, cs)
	e, stop := runEngine(t, logs, ruleYAML)
	testcluster.Eventually(t, "the rule to sync", synced(e))

	// TTLs 5 s to 60 s, spread evenly (3 or 4 a second), so that the
	// deletions stay within the example's own spec.rateLimit (5 a second,
	// burst 10).
	expiry := map[string]time.Time{}
	var last time.Time
	for i := range n {
		name := fmt.Sprintf("cm-%03d", i)
		ttl := 5 + i*56/n
		cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
		cm.SetName(name)
		cm.SetAnnotations(map[string]string{"kreact.dev/ttl": fmt.Sprintf("%ds", ttl)})
		got, err := cms.Create(ctx, cm, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		expiry[name] = got.GetCreationTimestamp().Add(time.Duration(ttl) * time.Second)
		if expiry[name].After(last) {
			last = expiry[name]
		}
	}
	first := slices.MinFunc(valuesOf(expiry), time.Time.Compare)
	t.Logf("200 ConfigMaps created; expiries from %s to %s", first.Format(time.TimeOnly), last.Format(time.TimeOnly))

	// Restart in the middle: about half the ConfigMaps are still waiting
	// on their timers, which die with the first kreact; the second one
	// re-arms them from its initial adds. kreact stays away for a second,
	// about what restarting its process takes, around an expiry that some
	// ConfigMaps have (expiries fall on whole seconds, and a second in the
	// middle may have none), so that those expire while no kreact runs:
	// the initial add deletes them.
	due := last
	for _, exp := range expiry {
		if !exp.Before(first.Add(last.Sub(first)/2)) && exp.Before(due) {
			due = exp
		}
	}
	time.Sleep(time.Until(due.Add(-500 * time.Millisecond)))
	stop()
	stopped := time.Now()
	time.Sleep(max(time.Second, time.Until(due.Add(500*time.Millisecond))))
	e, _ = runEngine(t, logs, ruleYAML)
	testcluster.Eventually(t, "the restarted rule to sync", synced(e))
	synced := time.Now()
	mu.Lock()
	gone := len(deleted)
	mu.Unlock()
	away := 0
	for _, exp := range expiry {
		if !exp.Before(stopped) && exp.Before(synced) {
			away++
		}
	}
	t.Logf("restarted: %d ConfigMaps deleted before the restart, %d expired while kreact was away (%v)",
		gone, away, synced.Sub(stopped).Round(time.Millisecond))
	if away == 0 {
		t.Errorf("no ConfigMap expired while kreact was away: the restart tests only the re-armed timers")
	}

	within(t, time.Until(last.Add(30*time.Second)), "every ConfigMap to be deleted", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(deleted) == n
	})
	listsAfter := clusterConfigMapLists(t, cs)

	mu.Lock()
	defer mu.Unlock()
	var worst time.Duration
	for name, exp := range expiry {
		late := deleted[name].Sub(exp)
		worst = max(worst, late)
		switch {
		case late < 0:
			t.Errorf("%s deleted %v before its expiry", name, -late)
		case late > 2*time.Second:
			t.Errorf("%s deleted %v after its expiry, want at most 2s", name, late)
		}
	}
	t.Logf("latest deletion: %v after expiry", worst.Round(time.Millisecond))

	// Each start lists once to check its permissions, then makes its
	// initial list in pages (resume.PageSize objects each): as many as the
	// objects its informer synced with need, whatever other tests left in
	// the cluster.
	want := 0
	syncedLine := regexp.MustCompile(`msg="informer synced" component=dynamicinformer watch.resource=configmaps.v1 objects=(\d+)`)
	for _, m := range syncedLine.FindAllStringSubmatch(logs.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		want += 1 + n/resume.PageSize + 1
	}
	if lists := listsAfter - listsBefore; lists > want {
		t.Errorf("the API server served %d cluster-wide LISTs of configmaps over two kreact starts, want at most %d (a preflight and the pages of an initial list per start)", lists, want)
	} else {
		t.Logf("cluster-wide LISTs of configmaps: %d over two kreact starts (at most %d)", lists, want)
	}
}

func valuesOf[K comparable, V any](m map[K]V) []V {
	vs := make([]V, 0, len(m))
	for _, v := range m {
		vs = append(vs, v)
	}
	return vs
}

// clusterConfigMapLists sums the API server's apiserver_request_total for
// LISTs of configmaps across all namespaces, whatever their response code.
func clusterConfigMapLists(t *testing.T, cs kubernetes.Interface) int {
	t.Helper()
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	sample := regexp.MustCompile(`^apiserver_request_total\{([^}]*)\} (\S+)$`)
	total := 0
	for line := range strings.Lines(string(raw)) {
		m := sample.FindStringSubmatch(strings.TrimSpace(line))
		if m == nil {
			continue
		}
		labels := m[1]
		if !strings.Contains(labels, `resource="configmaps"`) || !strings.Contains(labels, `verb="LIST"`) ||
			!strings.Contains(labels, `scope="cluster"`) || !strings.Contains(labels, `group=""`) {
			continue
		}
		f, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatalf("metric %q: %v", line, err)
		}
		total += int(f)
	}
	return total
}
