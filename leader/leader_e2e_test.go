//go:build e2e

package leader

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"

	"github.com/kreact/kreact/internal/leaktest"
	"github.com/kreact/kreact/internal/testcluster"
)

// cluster is the test control plane, one per test binary.
var cluster *testcluster.Cluster

func TestMain(m *testing.M) { testcluster.Main(m, testcluster.Options{}, &cluster) }

// These tests run Elector.Run in-process against the test API server,
// with short durations. They assert who leads and in which order, never how
// fast: every wait has a generous deadline.

const leaseNamespace = "default"

// election is the shared state of the candidates of one test.
type election struct {
	t      *testing.T
	lease  string
	logs   *testcluster.LogBuffer
	active atomic.Int32 // candidates whose lead is running
	// overlap is set if two leads ever ran at once.
	overlap atomic.Bool
}

// newElection starts an election on a Lease of its own (so that reruns with
// -count start afresh), deleted when the test ends.
func newElection(t *testing.T, prefix string) *election {
	leaktest.Check(t) // Run returns only once its goroutines have stopped
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	e := &election{t: t, lease: prefix + "-" + hex.EncodeToString(suffix), logs: &testcluster.LogBuffer{}}
	t.Cleanup(func() {
		_ = leaseClient(t).Delete(context.Background(), e.lease, metav1.DeleteOptions{})
		if e.overlap.Load() {
			t.Error("two candidates led at the same time")
		}
		if t.Failed() {
			t.Logf("logs:\n%s", e.logs)
		}
	})
	return e
}

// candidate is one in-process replica campaigning with Elector.Run.
type candidate struct {
	id      string
	cancel  context.CancelFunc
	done    chan error    // run's result
	leading chan struct{} // closed when lead starts
	stopped chan struct{} // closed when lead's context has ended

	mu       sync.Mutex
	notified []bool
}

func (e *election) campaign(id string, keepLease bool) *candidate {
	e.t.Helper()
	c := &candidate{id: id, done: make(chan error, 1), leading: make(chan struct{}), stopped: make(chan struct{})}
	logger := slog.New(slog.NewTextHandler(e.logs, &slog.HandlerOptions{Level: slog.LevelDebug})).With("candidate", id)
	client, err := NewClient(cluster.Config(), 1500*time.Millisecond)
	if err != nil {
		e.t.Fatal(err)
	}
	el, err := New(client, Options{
		Namespace:     leaseNamespace,
		Name:          e.lease,
		Identity:      id,
		LeaseDuration: 2 * time.Second,
		RenewDeadline: 1500 * time.Millisecond,
		RetryPeriod:   300 * time.Millisecond,
		KeepLease:     keepLease,
		Logger:        logger,
		OnLeading: func(leading bool) {
			c.mu.Lock()
			c.notified = append(c.notified, leading)
			c.mu.Unlock()
		},
	})
	if err != nil {
		e.t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go func() {
		c.done <- el.Run(ctx, func(ctx context.Context) error {
			if e.active.Add(1) > 1 {
				e.overlap.Store(true)
			}
			close(c.leading)
			<-ctx.Done()
			e.active.Add(-1)
			close(c.stopped)
			return nil
		})
	}()
	e.t.Cleanup(func() {
		cancel()
		select {
		case <-c.done:
		case <-time.After(60 * time.Second):
			e.t.Errorf("candidate %s still running 60s after its context ended", id)
		}
	})
	return c
}

func (c *candidate) notifications() []bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.notified)
}

// stop ends the candidate's context and returns run's error.
func (c *candidate) stop(t *testing.T) error {
	t.Helper()
	c.cancel()
	select {
	case err := <-c.done:
		c.done <- err // for the cleanup
		return err
	case <-time.After(60 * time.Second):
		t.Fatalf("candidate %s: run did not return within 60s of its context ending", c.id)
		return nil
	}
}

func isLeading(c *candidate) bool {
	select {
	case <-c.leading:
		return true
	default:
		return false
	}
}

// firstLeader waits until one of the candidates leads and returns it and
// the other.
func firstLeader(t *testing.T, a, b *candidate) (leader, other *candidate) {
	t.Helper()
	select {
	case <-a.leading:
		leader, other = a, b
	case <-b.leading:
		leader, other = b, a
	case <-time.After(60 * time.Second):
		t.Fatal("no candidate became the leader within 60s")
	}
	if isLeading(other) {
		t.Fatal("both candidates lead")
	}
	return leader, other
}

func waitLeading(t *testing.T, c *candidate) {
	t.Helper()
	select {
	case <-c.leading:
	case <-time.After(60 * time.Second):
		t.Fatalf("candidate %s did not become the leader within 60s", c.id)
	}
}

func leaseClient(t *testing.T) coordinationv1client.LeaseInterface {
	t.Helper()
	client, err := coordinationv1client.NewForConfig(cluster.Config())
	if err != nil {
		t.Fatal(err)
	}
	return client.Leases(leaseNamespace)
}

func holder(t *testing.T, lease string) string {
	t.Helper()
	l, err := leaseClient(t).Get(t.Context(), lease, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return ptr.Deref(l.Spec.HolderIdentity, "")
}

func TestLeaderElectionStandbyTakesOverAfterACrash(t *testing.T) {
	e := newElection(t, "kreact-e2e-crash")
	// keepLease: whichever leads "crashes" without releasing the lease.
	a := e.campaign("replica-a", true)
	b := e.campaign("replica-b", true)
	leader, other := firstLeader(t, a, b)
	if got := holder(t, e.lease); got != leader.id {
		t.Errorf("lease holder %q, want the leader %q", got, leader.id)
	}

	if err := leader.stop(t); err != nil {
		t.Errorf("crashed leader's run = %v, want nil (its context ended)", err)
	}
	select {
	case <-leader.stopped:
	default:
		t.Error("run returned before the leader's lead returned")
	}
	waitLeading(t, other)
	if got := holder(t, e.lease); got != other.id {
		t.Errorf("lease holder %q after the takeover, want %q", got, other.id)
	}
	select {
	case <-other.stopped:
		t.Error("the new leader's context ended while it holds the lease")
	default:
	}
}

func TestLeaderElectionCleanStopReleasesTheLease(t *testing.T) {
	e := newElection(t, "kreact-e2e-release")
	a := e.campaign("replica-a", false)
	waitLeading(t, a)
	b := e.campaign("replica-b", false)
	// b stands by: a keeps renewing, so b must see a as the holder.
	if err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 60*time.Second, true, func(context.Context) (bool, error) {
		n := b.notifications()
		return len(n) > 0 && !n[0], nil
	}); err != nil {
		t.Fatal("b never started campaigning")
	}
	if isLeading(b) {
		t.Fatal("b leads while a holds the lease")
	}

	if err := a.stop(t); err != nil {
		t.Errorf("a's run = %v, want nil", err)
	}
	// Released before run returned: the holder is no longer a (it is empty,
	// or b already), without waiting for the lease to expire.
	if got := holder(t, e.lease); got == a.id {
		t.Errorf("lease still held by %q after a clean stop", got)
	}
	waitLeading(t, b)
	if got, want := a.notifications(), []bool{false, true, false}; !slices.Equal(got, want) {
		t.Errorf("a notified %v, want %v (campaigning, leading, stopped)", got, want)
	}
}

func TestLeaderElectionLostLeaseStopsLeadAndFailsRun(t *testing.T) {
	e := newElection(t, "kreact-e2e-lost")
	a := e.campaign("replica-a", false)
	waitLeading(t, a)

	// Another holder takes the lease over, as after a network partition in
	// which a's renewals did not get through.
	leases := leaseClient(t)
	err := wait.PollUntilContextTimeout(t.Context(), 50*time.Millisecond, 60*time.Second, true, func(ctx context.Context) (bool, error) {
		l, err := leases.Get(ctx, e.lease, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		now := metav1.NewMicroTime(time.Now())
		l.Spec = coordinationv1.LeaseSpec{
			HolderIdentity:       ptr.To("thief"),
			LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime:          &now,
			RenewTime:            &now,
		}
		_, err = leases.Update(ctx, l, metav1.UpdateOptions{})
		return err == nil, nil // a conflict with a's renewal: try again
	})
	if err != nil {
		t.Fatalf("steal the lease: %v", err)
	}

	select {
	case <-a.stopped:
	case <-time.After(60 * time.Second):
		t.Fatal("lead's context did not end after the lease was lost")
	}
	select {
	case err := <-a.done:
		a.done <- err
		if !errors.Is(err, ErrLostLease) {
			t.Errorf("run = %v, want ErrLostLease", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("run did not return after the lease was lost")
	}
	if got := holder(t, e.lease); got != "thief" {
		t.Errorf("lease holder %q, want the thief kept", got)
	}
}
