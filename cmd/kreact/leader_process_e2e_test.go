//go:build e2e

package main

import (
	"strings"
	"syscall"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/internal/testcluster"
)

// TestLeaderFailoverBetweenProcesses runs two real `kreact run
// --leader-elect` processes with the example rules: exactly one acts; after
// SIGKILL of the leader the other takes over and the rules keep working.
func TestLeaderFailoverBetweenProcesses(t *testing.T) {
	start := func() *kreactProcess {
		return startKreact(t, "run", "-f", "../../examples",
			"--leader-elect", "--leader-elect-namespace", "default", "--leader-elect-name", "kreact-failover",
			"--leader-elect-lease-duration", "4s", "--leader-elect-renew-deadline", "3s", "--leader-elect-retry-period", "500ms")
	}
	acting := func(r *kreactProcess) bool { return strings.Contains(r.stderr.String(), "acquired the lease") }

	a, b := start(), start()
	testcluster.Eventually(t, "one replica to lead", func() bool { return acting(a) || acting(b) })
	testcluster.Eventually(t, "the other to stand by", func() bool {
		return strings.Contains(a.stderr.String(), "another replica holds the lease") || strings.Contains(b.stderr.String(), "another replica holds the lease")
	})
	leader, standby := a, b
	if acting(b) {
		leader, standby = b, a
	}
	if acting(standby) {
		t.Fatal("both replicas acquired the lease")
	}

	dyn := dynamic.NewForConfigOrDie(cluster.Config())
	namespaces := dyn.Resource(schema.GroupVersionResource{Version: "v1", Resource: "namespaces"})
	labelled := func(name string) bool {
		ns, err := namespaces.Get(t.Context(), name, metav1.GetOptions{})
		return err == nil && ns.GetLabels()["team"] == "unassigned"
	}
	create := func(name string) {
		t.Helper()
		ns := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": name}}}
		if _, err := namespaces.Create(t.Context(), ns, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("failover-before")
	testcluster.Eventually(t, "the leader to label failover-before", func() bool { return labelled("failover-before") })
	if strings.Contains(standby.stderr.String(), `msg="patch done"`) {
		t.Error("the standby acted while the other replica led")
	}

	if err := leader.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = leader.wait()
	testcluster.Eventually(t, "the standby to take over", func() bool { return acting(standby) })
	create("failover-after")
	testcluster.Eventually(t, "the new leader to label failover-after", func() bool { return labelled("failover-after") })

	// The new leader replays its cache as initial adds: failover-before is
	// seen again, and its patch and apply are no-ops on the result.
	ns, err := namespaces.Get(t.Context(), "failover-before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.GetLabels(); got["team"] != "unassigned" || got["kreact.dev/managed"] != "true" {
		t.Errorf("failover-before labels = %v after the failover", got)
	}
	// The policy may be the action the killed leader did not get to: the
	// new leader's replay applies it, in its own time (failover-after's
	// label says nothing about failover-before's queue).
	policies := dyn.Resource(schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "networkpolicies"}).
		Namespace("failover-before")
	testcluster.Eventually(t, "failover-before to have its NetworkPolicy", func() bool {
		l, err := policies.List(t.Context(), metav1.ListOptions{})
		return err == nil && len(l.Items) == 1
	})
}
