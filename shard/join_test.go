package shard

import (
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"k8s.io/client-go/rest"
)

// A replica without a name gets one of its own, lower case and unique per
// process, that makes a valid Lease name.
func TestJoinNamesTheReplica(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:1"}
	opts := MembershipOptions{Group: "kreact", LeaseDuration: 15 * time.Second, RenewPeriod: 3 * time.Second}
	a, err := Join(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Join(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	valid := regexp.MustCompile(`^[a-z0-9.-]+-[0-9a-f]{8}$`)
	if !valid.MatchString(a.Identity()) || a.Identity() == b.Identity() {
		t.Errorf("identities %q and %q: want two different host-name-and-suffix names", a.Identity(), b.Identity())
	}
	if want := "kreact-" + a.Identity(); a.LeaseName() != want {
		t.Errorf("lease %q, want %q", a.LeaseName(), want)
	}
	opts.Identity = "pod-0"
	c, err := Join(cfg, opts)
	if err != nil || c.Identity() != "pod-0" {
		t.Errorf("Join with an identity = %v, %v; want pod-0", c, err)
	}
	opts.RenewPeriod = 10 * time.Second
	if _, err := Join(cfg, opts); err == nil || !strings.Contains(err.Error(), "less than half the lease duration") {
		t.Errorf("Join with a renew period over half the lease = %v, want an error", err)
	}
}

// LogRange logs the member's identity, members and range, then the
// attributes it is given.
func TestLogRange(t *testing.T) {
	m, err := NewMembership(nil, MembershipOptions{Namespace: "default", Identity: "a"})
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := m.LogRange(slog.New(slog.NewTextHandler(&out, nil)), "key", "uid").Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); !strings.Contains(got, `msg="sharding: this replica handles its shard of the watched objects" identity=a members=[] range=`) ||
		!strings.HasSuffix(got, " key=uid\n") {
		t.Errorf("LogRange logged %q", got)
	}
}
