package cmdline

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/shard"
)

// ShardFlags configure sharding: with --shards every replica is active and
// handles the objects of its shard (package shard).
type ShardFlags struct {
	Enabled       bool
	Group         string
	Namespace     string
	Key           string
	LeaseDuration time.Duration
	RenewPeriod   time.Duration
	Identity      string
}

// Register adds the --shard flags to fs.
func (s *ShardFlags) Register(fs *FlagSet) {
	fs.BoolVarP(&s.Enabled, "shards", "", false,
		"split the objects between all the replicas, each holding a Lease of its own; every replica is active (not with --leader-elect)")
	fs.StringVarP(&s.Group, "shard-group", "", "kreact",
		"name of the group of replicas that share the objects (the label kreact.dev/shard-group of their Leases)")
	fs.StringVarP(&s.Namespace, "shard-namespace", "", "",
		"namespace of the replicas' Leases (default: the pod's namespace, else \"default\")")
	fs.StringVarP(&s.Key, "shard-key", "", "uid",
		"what namespaced objects are split by: uid (even split) or namespace (a namespace's objects stay together); cluster-scoped objects are always split by uid")
	fs.DurationVar(&s.LeaseDuration, "shard-lease-duration", 15*time.Second,
		"how long a replica that stopped renewing its Lease keeps its shard before the others take it over")
	fs.DurationVar(&s.RenewPeriod, "shard-renew-period", 3*time.Second,
		"how often a replica renews its Lease and looks for replicas that joined or left; less than half the lease duration")
	fs.StringVarP(&s.Identity, "shard-identity", "", "",
		"this replica's name in the group, unique among the running replicas (default: the host name and a random suffix, a new member per process); "+
			"a process restarted with the same name, such as a StatefulSet's pod, takes its predecessor's Lease and range over")
}

// Validate checks the flags; --shards excludes --leader-elect.
func (s *ShardFlags) Validate(leaderElect bool) error {
	if !s.Enabled {
		return nil
	}
	switch {
	case leaderElect:
		return &UsageError{Msg: "run: --shards and --leader-elect exclude each other: with --shards every replica is active"}
	case s.Key != "uid" && s.Key != "namespace":
		return &UsageError{Msg: fmt.Sprintf("run: --shard-key must be uid or namespace, not %q", s.Key)}
	case s.RenewPeriod <= 0 || s.RenewPeriod >= s.LeaseDuration/2:
		return &UsageError{Msg: fmt.Sprintf("run: --shard-renew-period (%s) must be positive and less than half --shard-lease-duration (%s)",
			s.RenewPeriod, s.LeaseDuration)}
	case s.Group == "":
		return &UsageError{Msg: "run: --shard-group must not be empty"}
	}
	return nil
}

// Plan is the engine's sharding of the rules' informers.
func (s *ShardFlags) Plan() delivery.PlanOptions {
	return delivery.PlanOptions{Sharded: s.Enabled, ShardByNamespace: s.Key == "namespace"}
}

// MembershipOptions are the options of this replica's membership
// (shard.Join).
func (s *ShardFlags) MembershipOptions(logger *slog.Logger) shard.MembershipOptions {
	return shard.MembershipOptions{
		Namespace: s.Namespace, Group: s.Group, Identity: s.Identity,
		LeaseDuration: s.LeaseDuration, RenewPeriod: s.RenewPeriod, Logger: logger,
	}
}
