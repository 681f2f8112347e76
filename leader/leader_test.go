package leader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

func TestTermResult(t *testing.T) {
	own := errors.New("lead's own error")
	for _, c := range []struct {
		name    string
		term    *term
		stopped bool
		want    error
		alsoIs  error
	}{
		{name: "stopped while standing by", term: &term{}, stopped: true, want: nil},
		{name: "elector gave up before lead started", term: &term{}, want: ErrLostLease},
		{name: "lead returned its error", term: &term{started: true, err: own}, want: own},
		{name: "lead returned nil", term: &term{started: true}, stopped: true, want: nil},
		{name: "lost, lead cancelled", term: &term{started: true, lost: true, err: context.Canceled}, want: ErrLostLease},
		{name: "lost, lead failed", term: &term{started: true, lost: true, err: own}, want: ErrLostLease, alsoIs: own},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.term.result(c.stopped)
			if c.want == nil && got != nil || c.want != nil && !errors.Is(got, c.want) {
				t.Errorf("result = %v, want %v", got, c.want)
			}
			if c.alsoIs != nil && !errors.Is(got, c.alsoIs) {
				t.Errorf("result = %v, want it to wrap %v", got, c.alsoIs)
			}
		})
	}
}

func TestTermStopKeepsLeadFromStarting(t *testing.T) {
	tm := &term{done: make(chan struct{})}
	if tm.stop() {
		t.Error("stop reported a lead that never started")
	}
	if tm.begin() {
		t.Error("lead may start after stop")
	}
	tm = &term{done: make(chan struct{})}
	if !tm.begin() {
		t.Fatal("lead may not start")
	}
	if !tm.markLost() || tm.markLost() {
		t.Error("markLost reports news only the first time")
	}
	tm.finish(nil)
	if !tm.stop() {
		t.Error("stop did not report the lead that started")
	}
	<-tm.done
}

// stubLock is a resourcelock.Interface whose writes succeed or fail as
// told.
type stubLock struct {
	resourcelock.Interface
	err error
}

func (s stubLock) Create(context.Context, resourcelock.LeaderElectionRecord) error { return s.err }
func (s stubLock) Update(context.Context, resourcelock.LeaderElectionRecord) error { return s.err }

func TestRenewalLockRecordsOnlyItsOwnSuccessfulWrites(t *testing.T) {
	failing := &renewalLock{Interface: stubLock{err: errors.New("conflict")}, id: "me"}
	_ = failing.Update(t.Context(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	if !failing.lastRenewal().IsZero() {
		t.Error("a failed write counts as a renewal")
	}
	l := &renewalLock{Interface: stubLock{}, id: "me"}
	_ = l.Create(t.Context(), resourcelock.LeaderElectionRecord{HolderIdentity: "other"})
	if !l.lastRenewal().IsZero() {
		t.Error("a write for another holder counts as a renewal")
	}
	_ = l.Update(t.Context(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	if l.lastRenewal().IsZero() {
		t.Error("a successful renewal was not recorded")
	}
}

func TestRenewalLockWatch(t *testing.T) {
	// Never renewed: the deadline has long passed, lost is called.
	l := &renewalLock{Interface: stubLock{}, id: "me"}
	lost := false
	l.watch(t.Context(), time.Second, func() { lost = true })
	if !lost {
		t.Error("an expired renewal did not call lost")
	}
	// Renewed just now, and the context ends: lost is not called.
	_ = l.Update(t.Context(), resourcelock.LeaderElectionRecord{HolderIdentity: "me"})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	lost = false
	l.watch(ctx, time.Hour, func() { lost = true })
	if lost {
		t.Error("lost called although the lease was renewed and the watch stopped")
	}
}

func TestNamespaceIn(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "namespace")
	if got, ok := namespaceIn(file); got != "" || ok {
		t.Errorf("no file: %q, %v; want not in a Pod", got, ok)
	}
	if err := os.WriteFile(file, []byte("kreact-system\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, ok := namespaceIn(file); got != "kreact-system" || !ok {
		t.Errorf("namespaceIn = %q, %v", got, ok)
	}
}

func TestNewIdentityIsUniquePerCall(t *testing.T) {
	a, err := NewIdentity()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewIdentity()
	host, _ := os.Hostname()
	if a == b || !strings.HasPrefix(a, host+"_") {
		t.Errorf("identities %q and %q: want host_suffix, different each time", a, b)
	}
}
