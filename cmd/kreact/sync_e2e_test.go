//go:build e2e

package main

import (
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sync/errgroup"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestRunSaysSyncedOnlyOnceListed: with a few thousand ConfigMaps to list,
// kreact run says "caches synced" only once the rule's informer has listed
// them all and reports itself synced, and the line says how many objects
// that was. Before, the line came as soon as the rule was loaded, with
// nothing listed. The test asserts what the line says and what came
// before it, never how long anything took.
func TestRunSaysSyncedOnlyOnceListed(t *testing.T) {
	const (
		ns = "sync-e2e"
		n  = 3000
	)
	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	ensureNamespace(t, dyn, ns)
	var g errgroup.Group
	g.SetLimit(8)
	for i := range n {
		g.Go(func() error {
			name := fmt.Sprintf("cm-%d", i)
			cm := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
				"metadata": map[string]any{"name": name, "namespace": ns}, "data": map[string]any{"i": name}}}
			_, err := dyn.Resource(configMapsGVR).Namespace(ns).Create(t.Context(), cm, metav1.CreateOptions{})
			if apierrors.IsAlreadyExists(err) {
				return nil // a rerun with -count
			}
			return err
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}

	dir := t.TempDir()
	writeRule(t, dir, "quiet.yaml", ruleYAML("quiet", ns, "function onAdd(obj, ctx) {}", ""))
	probe := testcluster.FreeAddr(t)
	c := startCLI(t, "run", "-f", dir, "--kubeconfig", cluster.KubeconfigPath(), "--health-probe-bind-address", probe)
	testcluster.Eventually(t, "kreact to be running", func() bool { return strings.Contains(c.stderr.String(), "kreact is running") })
	// The line and the probe wait for the same thing, and caught-up rules
	// stay caught up: the probe cannot be behind the line.
	if code, body := testcluster.HTTPGet(t, "http://"+probe+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after \"caches synced\" = %d %s, want 200", code, body)
	}

	logs := c.stderr.String()
	loaded := strings.Index(logs, "rules loaded")
	syncedAt := strings.Index(logs, "caches synced; kreact is running")
	if loaded < 0 || syncedAt < loaded {
		t.Fatalf("\"caches synced\" at %d, \"rules loaded\" at %d: want the rules loaded first", syncedAt, loaded)
	}
	line := logs[syncedAt:]
	line = line[:strings.IndexByte(line, '\n')]
	t.Logf("%s", line)

	// The line reports the informers as they were when it was written: the
	// rule's one informer, synced, with every ConfigMap listed.
	m := regexp.MustCompile(` objects=(\d+) `).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("the synced line has no object count: %s", line)
	}
	if got, _ := strconv.Atoi(m[1]); got < n {
		t.Errorf("the synced line reports %d objects listed, want at least %d: %s", got, n, line)
	}
	if want := fmt.Sprintf(`configmaps.v1 in namespace \"%s\": synced, `, ns); !strings.Contains(line, want) {
		t.Errorf("the synced line does not report the informer synced (%s): %s", want, line)
	}
	if strings.Count(logs, "caches synced") != 1 {
		t.Errorf("\"caches synced\" logged %d times, want once", strings.Count(logs, "caches synced"))
	}
}
