//go:build e2e

package main

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/testcluster"
)

// Scaled down from the 3,000 ConfigMaps in 30 namespaces: the
// machine running the tests has 2 cores shared with the API server and
// etcd; 30 namespaces are kept.
const (
	shardNamespaces = 30
	shardPerNS      = 20
)

func shardRule(replica string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: handled-by
spec:
  watch:
    - resource: configmaps
      labelSelector: shard-e2e=yes
  rateLimit: 500
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  script: |
    function onAdd(obj, ctx) {
      kreact.patch(obj, {metadata: {annotations: {"kreact.dev/handled-by-%s": "true"}}});
    }
`, replica)
}

// threeMembers matches a replica's log line for a range computed from
// three members.
var threeMembers = regexp.MustCompile(`"shard range changed".* members="\[\S+ \S+ \S+\]"`)

// TestShardsSplitTheObjects runs three kreact replicas with --shards
// against an API server with ShardedListAndWatch on: every ConfigMap is
// annotated by exactly one replica, each replica caches at most 0.4× of
// them, and the filtering happened on the server (mode="server", nothing
// filtered by kreact, and the API server counts the events it filtered).
func TestShardsSplitTheObjects(t *testing.T) {
	gated, err := testcluster.Start(testcluster.Options{FeatureGates: map[string]bool{"ShardedListAndWatch": true}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gated.Stop() })
	cs := kubernetes.NewForConfigOrDie(gated.Config())
	ctx := t.Context()
	// Replicas are processes, as in a cluster (and because klog's logger
	// is process-wide).
	bin := filepath.Join(t.TempDir(), "kreact")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build kreact: %v\n%s", err, out)
	}
	replicas := []string{"replica-a", "replica-b", "replica-c"}
	metricsURL := map[string]string{}
	logs := map[string]*testcluster.LogBuffer{}
	for _, r := range replicas {
		dir := t.TempDir()
		writeRule(t, dir, "rule.yaml", shardRule(r))
		addr := freeAddr(t)
		metricsURL[r] = "http://" + addr + "/metrics"
		logs[r] = &testcluster.LogBuffer{}
		cmd := exec.Command(bin, "run", "-f", dir, "--kubeconfig", gated.KubeconfigPath(), "--shards",
			"--shard-namespace", "default", "--shard-lease-duration", "6s", "--shard-renew-period", "500ms",
			"--metrics-bind-address", addr)
		cmd.Stderr = logs[r]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
			if t.Failed() {
				t.Logf("%s log:\n%s", r, logs[r].String())
			}
		})
	}
	for _, r := range replicas {
		testcluster.Eventually(t, r+" to be running", func() bool { return strings.Contains(logs[r].String(), "kreact is running") })
	}
	// Objects that exist while replicas are still joining are handled by
	// the first ones, then handed over (each replica that gains a range
	// receives its objects as initial adds): the split is checked on
	// objects created once every replica sees the three members.
	for _, r := range replicas {
		testcluster.Eventually(t, r+" to see three members", func() bool {
			return threeMembers.MatchString(logs[r].String())
		})
	}
	total := 0
	for i := range shardNamespaces {
		ns := fmt.Sprintf("shard-e2e-%d", i)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		for j := range shardPerNS {
			cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", j), Namespace: ns, Labels: map[string]string{"shard-e2e": "yes"}}}
			if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			total++
		}
	}

	// handledBy returns, for every ConfigMap, the replicas that annotated it.
	handledBy := func() map[string][]string {
		out := map[string][]string{}
		list, err := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{LabelSelector: "shard-e2e=yes"})
		if err != nil {
			t.Fatal(err)
		}
		for _, cm := range list.Items {
			key := cm.Namespace + "/" + cm.Name
			out[key] = nil
			for a := range cm.Annotations {
				if r, ok := strings.CutPrefix(a, "kreact.dev/handled-by-"); ok {
					out[key] = append(out[key], r)
				}
			}
		}
		return out
	}
	testcluster.Eventually(t, "every ConfigMap to be handled", func() bool {
		for _, by := range handledBy() {
			if len(by) == 0 {
				return false
			}
		}
		return true
	})
	// Members that joined one after the other may briefly overlap (one
	// renew period); wait for the split to settle before judging it.
	testcluster.Eventually(t, "the replicas to agree on three members", func() bool {
		for _, r := range replicas {
			if objectsOf(t, metricsURL[r], "server") > int(0.4*float64(total)) {
				return false
			}
		}
		return true
	})
	counts := map[string]int{}
	for key, by := range handledBy() {
		if len(by) != 1 {
			t.Errorf("%s handled by %v, want exactly one replica", key, by)
		}
		for _, r := range by {
			counts[r]++
		}
	}
	t.Logf("%d ConfigMaps; annotated per replica: %v", total, counts)

	limit := 0.4 * float64(total)
	for _, r := range replicas {
		body := scrape(t, metricsURL[r])
		objects := objectsOf(t, metricsURL[r], "server")
		t.Logf("%s: kreact_informer_objects{configmaps} = %d (server mode)", r, objects)
		if objects == 0 || float64(objects) > limit {
			t.Errorf("%s caches %d of %d ConfigMaps, want 0 < n ≤ %.0f", r, objects, total, limit)
		}
		if m := metricValue(body, `kreact_informer_shard_filtered_total{namespace="",resource="configmaps"}`); m != 0 {
			t.Errorf("%s filtered %d objects itself, want 0 (the server filters)", r, m)
		}
		if !strings.Contains(logs[r].String(), `msg="sharded informer"`) || !strings.Contains(logs[r].String(), "mode=server") {
			t.Errorf("%s did not log its informer's mode", r)
		}
	}

	// A fresh write to every object: the API server's watch cache drops the
	// events each replica's watch does not select, and counts them.
	for key := range handledBy() {
		ns, name, _ := strings.Cut(key, "/")
		patch := []byte(`{"metadata":{"labels":{"fresh":"1"}}}`)
		if _, err := cs.CoreV1().ConfigMaps(ns).Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	testcluster.Eventually(t, "the API server to count filtered watch events", func() bool {
		raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
		if err != nil {
			return false
		}
		n := metricValue(string(raw), `apiserver_watch_filtered_events_total{group="",resource="configmaps"}`)
		return n >= total // each event is filtered for at least two of the three watches
	})
}

// objectsOf returns the configmaps objects in a replica's sharded
// informers in mode.
func objectsOf(t *testing.T, url, mode string) int {
	return metricValue(scrape(t, url), `kreact_informer_shard_objects{mode="`+mode+`",namespace="",resource="configmaps"}`)
}

func scrape(t *testing.T, url string) string {
	t.Helper()
	code, body := httpGet(t, url)
	if code != 200 {
		t.Fatalf("GET %s: %d", url, code)
	}
	return body
}

// metricValue returns the value of the sample named exactly series, or -1.
func metricValue(body, series string) int {
	re := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(series) + ` (\S+)$`)
	m := re.FindStringSubmatch(body)
	if m == nil {
		return -1
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return -1
	}
	return int(f)
}
