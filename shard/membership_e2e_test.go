//go:build e2e

package shard_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"

	"github.com/kreact/kreact/shard"
)

// TestMembership runs three replicas' memberships: their ranges tile the
// hash space; a replica that leaves hands its range over at once; a
// replica whose Lease is not renewed is dropped when it expires.
func TestMembership(t *testing.T) {
	ctx := t.Context()
	cs := kubernetes.NewForConfigOrDie(cluster.Config())
	const ns = "default"
	opts := func(id string) shard.MembershipOptions {
		return shard.MembershipOptions{Namespace: ns, Group: "membership-test", Identity: id,
			LeaseDuration: 3 * time.Second, RenewPeriod: 200 * time.Millisecond, Logger: slog.New(slog.DiscardHandler)}
	}
	type replica struct {
		m      *shard.Membership
		cancel context.CancelFunc
		done   chan struct{}
	}
	start := func(id string) *replica {
		m, err := shard.NewMembership(cs.CoordinationV1(), opts(id))
		if err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithCancel(ctx)
		r := &replica{m: m, cancel: cancel, done: make(chan struct{})}
		go func() { defer close(r.done); _ = m.Run(rctx) }()
		t.Cleanup(func() { cancel(); <-r.done })
		return r
	}
	var mu sync.Mutex
	changes := 0
	replicas := map[string]*replica{}
	for _, id := range []string{"r-a", "r-b", "r-c"} {
		replicas[id] = start(id)
		replicas[id].m.Subscribe(func() { mu.Lock(); changes++; mu.Unlock() })
	}
	// tiled waits until the running replicas agree on want as the members
	// and their ranges tile the space.
	tiled := func(want ...string) {
		t.Helper()
		err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 10*time.Second, true, func(context.Context) (bool, error) {
			var ranges []shard.Range
			for _, id := range want {
				r := replicas[id].m
				if !slices.Equal(r.Members(), want) {
					return false, nil
				}
				rng, ok := r.Range()
				if !ok {
					return false, nil
				}
				ranges = append(ranges, rng)
			}
			var next uint64
			for i, rng := range ranges {
				if rng.Start != next || (i == len(ranges)-1) != (rng.End == 0) {
					return false, nil
				}
				next = rng.End
			}
			return true, nil
		})
		if err != nil {
			for _, id := range want {
				rng, ok := replicas[id].m.Range()
				t.Logf("%s: members %v range %v owns %v", id, replicas[id].m.Members(), rng, ok)
			}
			t.Fatalf("members %v never tiled the hash space", want)
		}
	}
	tiled("r-a", "r-b", "r-c")
	mu.Lock()
	if changes == 0 {
		t.Error("subscribers were never called")
	}
	mu.Unlock()

	// A replica that stops deletes its Lease: the others take over at once
	// (well within the lease duration).
	stopped := time.Now()
	replicas["r-b"].cancel()
	<-replicas["r-b"].done
	tiled("r-a", "r-c")
	if d := time.Since(stopped); d > 2*time.Second {
		t.Errorf("takeover after a clean stop took %s", d)
	}
	if _, err := cs.CoordinationV1().Leases(ns).Get(ctx, "membership-test-r-b", metav1.GetOptions{}); err == nil {
		t.Error("the stopped replica's lease is still there")
	}

	// A member that stops renewing (a crash) counts until its Lease expires.
	now := metav1.NewMicroTime(time.Now())
	crashed := &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: "membership-test-crashed", Namespace: ns, Labels: map[string]string{shard.GroupLabel: "membership-test"}},
		Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("r-crashed"), LeaseDurationSeconds: ptr.To[int32](2),
			RenewTime: &now},
	}
	if _, err := cs.CoordinationV1().Leases(ns).Create(ctx, crashed, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	replicas["r-crashed"] = &replica{m: replicas["r-a"].m} // seen through r-a's eyes only
	err := wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 5*time.Second, true, func(context.Context) (bool, error) {
		return slices.Contains(replicas["r-a"].m.Members(), "r-crashed"), nil
	})
	if err != nil {
		t.Fatal("a live lease of the group is not counted as a member")
	}
	delete(replicas, "r-crashed")
	tiled("r-a", "r-c")
	if d := time.Since(now.Time); d < 2*time.Second {
		t.Errorf("the crashed member was dropped after %s, before its lease expired", d)
	}
	t.Logf("crashed member dropped %s after its last renewal", time.Since(now.Time).Round(100*time.Millisecond))
}
