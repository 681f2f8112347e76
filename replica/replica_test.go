package replica

import (
	"log/slog"
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/shard"
)

// A replica alone is named after its host, or after its parent in the
// isolated rules' process, and leads unless leader election says not.
func TestJoinAlone(t *testing.T) {
	host, _ := os.Hostname()
	for _, c := range []struct {
		name string
		opts Options
		want func(string) bool
	}{
		{"alone", Options{}, func(n string) bool { return n == host }},
		{"isolated child", Options{Parent: "kreact-0_1234"}, func(n string) bool { return n == "kreact-0_1234" }},
		{"elected", Options{Elect: true}, func(n string) bool { return strings.HasPrefix(n, host+"_") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := Join(&rest.Config{Host: "https://127.0.0.1:1"}, c.opts)
			if err != nil {
				t.Fatal(err)
			}
			if !c.want(r.Name) {
				t.Errorf("Name = %q", r.Name)
			}
			if s := r.Script(); s.Name != r.Name || !s.Leader {
				t.Errorf("Script() = %+v; want %q leading", s, r.Name)
			}
			r.SetLeading(false)
			if r.Script().Leader {
				t.Error("Script().Leader after SetLeading(false)")
			}
			if r.Membership != nil || len(r.Layers) != 0 || len(r.Always) != 0 || r.Schedules != nil || r.Informers.Shards != nil || r.RefuseIsolation != "" {
				t.Errorf("unsharded replica has sharding: %+v", r)
			}
		})
	}
}

// Sharded, the replica is named after its membership, which leads for
// the once-per-cluster ticks, runs under everything and shares the
// objects out to the informers; isolated rules cannot run.
func TestJoinSharded(t *testing.T) {
	logger := slog.New(slog.DiscardHandler)
	r, err := Join(&rest.Config{Host: "https://127.0.0.1:1"}, Options{ShardKey: "namespace",
		Shards: &shard.MembershipOptions{Namespace: "kreact", Identity: "replica-a", Logger: logger}})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Membership
	if m == nil || r.Name != "replica-a" || m.Identity() != "replica-a" {
		t.Fatalf("Name = %q, Membership = %v; want replica-a's", r.Name, m)
	}
	if r.Script().Leader != m.OwnsSchedules() {
		t.Errorf("Script().Leader = %v; want the membership's OwnsSchedules, %v", r.Script().Leader, m.OwnsSchedules())
	}
	r.SetLeading(true)
	if r.Script().Leader != m.OwnsSchedules() {
		t.Error("SetLeading changed a sharded replica's leadership")
	}
	if len(r.Layers) != 1 || r.Layers[0] != m || len(r.Always) != 1 || r.Schedules != m || r.Informers.Shards != m || !r.Informers.ShardByNamespace {
		t.Errorf("sharded replica: %+v", r)
	}
	if r.RefuseIsolation == "" {
		t.Error("isolated rules are not refused with --shards")
	}
}
