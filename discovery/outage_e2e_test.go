//go:build e2e

package discovery_test

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/internal/testcluster"
)

// outageLimit bounds how late, after the API server is back, a running
// cache may see a new CRD, and how long Run may take to return once its
// context ends: the 10 s that kreact run documents for its shutdown
// (docs/cli.md, "gives queued actions 10 s"). client-go's reflector alone, after
// a few outages, sleeps 30 to 60 s between attempts, and ignored its stop
// channel while it did; the limit checks that neither happens, not speed.
const outageLimit = 10 * time.Second

// TestE2ECRDCreatedRightAfterOutages kills the API server five times under
// a running cache, then creates a CRD as soon as the server is back: the
// CRD watch must have reconnected and the cache must report the CRD's
// resource within outageLimit, not when a reflector's backoff or the
// 5-minute poll ends.
func TestE2ECRDCreatedRightAfterOutages(t *testing.T) {
	verifyNoLeaks(t)
	cl := newClients(t)
	c := discovery.New(cl.discovery, discovery.Options{Metadata: cl.metadata, Logger: testLogger(t)})
	runCache(t, c)
	var log diffLog
	cancel := c.Subscribe(log.add)
	defer cancel()

	cluster.Outages(t, 3*time.Second, 5*time.Second, 3*time.Second, 10*time.Second, 3*time.Second)

	crd := testcluster.CRD{Group: "outage.kreact.io", Kind: "Survivor", Plural: "survivors"}
	created := time.Now()
	if _, err := cl.dynamic.Resource(testcluster.CRDGVR).Create(t.Context(), crd.Object(), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), cl.dynamic, crd) })
	waitFor(t, "the CRD created after the outages in a diff", func() bool {
		return log.saw(crd.GVR(), true) || time.Since(created) > outageLimit
	})
	if !log.saw(crd.GVR(), true) {
		t.Fatalf("the CRD created right after the outages was not reported within %v", outageLimit)
	}
	t.Logf("CRD reported within %v of its creation", time.Since(created).Round(time.Millisecond))
}

// TestE2ERunReturnsAfterOutages runs two caches through five outages of
// the API server, then cancels one while the server is down again and the
// other once it is back: each Run must return within outageLimit, whatever
// its watches were doing.
func TestE2ERunReturnsAfterOutages(t *testing.T) {
	verifyNoLeaks(t)
	cl := newClients(t)
	type running struct {
		cancel context.CancelFunc
		done   chan error
	}
	start := func() running {
		c := discovery.New(cl.discovery, discovery.Options{Metadata: cl.metadata, Logger: testLogger(t)})
		ctx, cancel := context.WithCancel(t.Context())
		r := running{cancel: cancel, done: make(chan error, 1)}
		go func() { r.done <- c.Run(ctx) }()
		t.Cleanup(func() {
			cancel()
			<-r.done
		})
		waitFor(t, "first discovery", c.HasSynced)
		return r
	}
	stop := func(what string, r running) {
		t.Helper()
		r.cancel()
		select {
		case err := <-r.done:
			r.done <- err // for the cleanup
			if err != nil {
				t.Errorf("Run %s = %v", what, err)
			}
		case <-time.After(outageLimit):
			t.Errorf("Run %s did not return within %v of its cancellation", what, outageLimit)
		}
	}
	whileDown, afterwards := start(), start()

	cluster.Outages(t, 3*time.Second, 5*time.Second, 3*time.Second, 10*time.Second, 3*time.Second)

	time.Sleep(time.Second)
	up := cluster.Down(t)
	time.Sleep(3 * time.Second)
	stop("with the API server down", whileDown)
	up()
	stop("with the API server back", afterwards)
}

// TestE2ELagAfterAnOutageIsChasedPromptly keeps the API server down long
// enough for the cache's retries to back off to half a minute, then
// creates a CRD as soon as the server is back, with discovery lagging the
// CRD (hidden from its answers) until the refreshes the CRD triggered have
// run. Once discovery serves it, the cache must see it within outageLimit:
// the outage's backoff must not carry over to chasing discovery's lag.
func TestE2ELagAfterAnOutageIsChasedPromptly(t *testing.T) {
	verifyNoLeaks(t)
	cl := newClients(t)
	lagging := &laggingDiscovery{DiscoveryInterface: cl.discovery}
	c := discovery.New(lagging, discovery.Options{Metadata: cl.metadata, Logger: testLogger(t)})
	runCache(t, c)
	var log diffLog
	cancel := c.Subscribe(log.add)
	defer cancel()

	// Retries after 1, 2, 4, 8 and 16 s fail: the next would wait 32 s.
	cluster.Outages(t, 20*time.Second)

	crd := testcluster.CRD{Group: "lagafter.kreact.io", Kind: "Straggler", Plural: "stragglers"}
	start := lagging.set(crd.Group)
	if err := testcluster.CreateCRD(t.Context(), cl.dynamic, crd); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = testcluster.DeleteCRD(context.Background(), cl.dynamic, crd) })
	waitFor(t, "refreshes triggered by the CRD", func() bool { return lagging.set(crd.Group) >= start+2 })
	if log.saw(crd.GVR(), true) {
		t.Fatal("hidden CRD reported")
	}
	lagging.set("")
	served := time.Now()
	waitFor(t, "the CRD once discovery serves it", func() bool {
		return log.saw(crd.GVR(), true) || time.Since(served) > outageLimit
	})
	if !log.saw(crd.GVR(), true) {
		t.Fatalf("the CRD was not reported within %v of discovery serving it", outageLimit)
	}
	t.Logf("CRD reported within %v of discovery serving it", time.Since(served).Round(time.Millisecond))
}
