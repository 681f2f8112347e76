//go:build e2e

package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/internal/testcluster"
)

// onceRule welcomes each labelled ConfigMap once, with a webhook call
// (which nothing makes idempotent), and records on every call the data.seq
// it saw, so that the test knows when every object has been called again.
func onceRule(url string) string {
	return fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata:
  name: welcome
spec:
  watch:
    - resource: configmaps
      labelSelector: once-e2e=yes
  rateLimit: 500
  permissions:
    - resources: [configmaps]
      verbs: [patch]
  http: [%q]
  script: |
    function handle(obj) {
      if (kreact.once(obj)) {
        kreact.http({url: %q, body: {object: obj.metadata.namespace + "/" + obj.metadata.name, replica: kreact.replica().name}});
      }
      const seq = (obj.data && obj.data.seq) || "0";
      if ((obj.metadata.annotations || {})["kreact.dev/seen"] !== seq) {
        kreact.patch(obj, {metadata: {annotations: {"kreact.dev/seen": seq}}});
      }
    }
    function onAdd(obj, ctx) { handle(obj); }
    function onUpdate(oldObj, obj, ctx) { handle(obj); }
`, url+"/", url+"/welcome")
}

// Done when of issue 29: kreact.once fires once for each of 100 objects
// across a SIGKILL restart and shard moves. Two replicas share the
// objects and welcome each; one is killed with SIGKILL and started again
// (it lists its objects again, as initial adds), a third joins (objects
// move to it, again as initial adds), and every object is written to so
// that each is called again wherever it now lives. Each object must have
// been welcomed exactly once. The objects are all marked before the kill,
// so that the kill falls outside the window in which kreact.once may
// repeat (between the webhook call and the marker).
func TestOnceAcrossRestartAndShardMove(t *testing.T) {
	const n = 100
	cs := kubernetes.NewForConfigOrDie(cluster.Config())
	var mu sync.Mutex
	welcomed := map[string]int{}
	byReplica := map[string]int{}
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body struct{ Object, Replica string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		mu.Lock()
		welcomed[body.Object]++
		byReplica[body.Replica]++
		mu.Unlock()
	}))
	defer hook.Close()
	dir := t.TempDir()
	writeRule(t, dir, "welcome.yaml", onceRule(hook.URL))
	start := func(r string) *kreactProcess {
		p := startKreact(t, "run", "-f", dir, "--shards", "--shard-group", "once-e2e",
			"--shard-identity", r, "--shard-namespace", "default",
			"--shard-lease-duration", shardLease.String(), "--shard-renew-period", "500ms",
			"--metrics-bind-address", testcluster.FreeAddr(t))
		testcluster.Eventually(t, r+" to be running", func() bool { return strings.Contains(p.stderr.String(), "kreact is running") })
		return p
	}
	// members waits until each replica computed its range from n members.
	procs := map[string]*kreactProcess{}
	members := func(n int) {
		t.Helper()
		for r, p := range procs {
			testcluster.Eventually(t, fmt.Sprintf("%s to see %d members", r, n), func() bool {
				all := rangeChanged.FindAllStringSubmatch(p.stderr.String(), -1)
				return len(all) > 0 && len(strings.Fields(all[len(all)-1][1])) == n
			})
		}
	}
	procs["replica-a"] = start("replica-a")
	procs["replica-b"] = start("replica-b")
	members(2)

	const ns = "once-e2e"
	if _, err := cs.CoreV1().Namespaces().Create(t.Context(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%d", i), Namespace: ns, Labels: map[string]string{"once-e2e": "yes"}}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(t.Context(), cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// seenAll waits until every object carries the marker and has been
	// called with data.seq seq.
	seenAll := func(seq string) {
		t.Helper()
		testcluster.Eventually(t, "every object marked and called at seq "+seq, func() bool {
			list, err := cs.CoreV1().ConfigMaps(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "once-e2e=yes"})
			if err != nil || len(list.Items) != n {
				return false
			}
			for _, cm := range list.Items {
				if _, ok := cm.Annotations["once.kreact.dev/welcome"]; !ok || cm.Annotations["kreact.dev/seen"] != seq {
					return false
				}
			}
			return true
		})
	}
	writeAll := func(seq string) {
		t.Helper()
		patch := fmt.Appendf(nil, `{"data":{"seq":%q}}`, seq)
		for i := range n {
			if _, err := cs.CoreV1().ConfigMaps(ns).Patch(t.Context(), fmt.Sprintf("cm-%d", i), "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	seenAll("0")

	// SIGKILL, and a restart that lists the objects again.
	a := procs["replica-a"]
	if err := a.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = a.wait()
	procs["replica-a"] = start("replica-a")
	members(2)
	writeAll("1")
	seenAll("1")

	// A shard move: a third replica takes part of the objects.
	procs["replica-c"] = start("replica-c")
	members(3)
	writeAll("2")
	seenAll("2")

	mu.Lock()
	defer mu.Unlock()
	total := 0
	for i := range n {
		key := fmt.Sprintf("%s/cm-%d", ns, i)
		total += welcomed[key]
		if welcomed[key] != 1 {
			t.Errorf("%s welcomed %d times, want once", key, welcomed[key])
		}
	}
	t.Logf("welcome calls: %d for %d objects, by replica %v", total, n, byReplica)
	// kreact.replica() names the shard identity of the replica that ran
	// the call.
	for r := range byReplica {
		if _, ok := procs[r]; !ok {
			t.Errorf("a welcome from replica %q, want one of the shard identities", r)
		}
	}
}
