package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/reaction"
	"github.com/kreact/kreact/shard"
)

// shardFlags configure sharding: with --shards every replica is active and
// handles the objects of its shard (package shard).
type shardFlags struct {
	enabled       bool
	group         string
	namespace     string
	key           string
	leaseDuration time.Duration
	renewPeriod   time.Duration
	identity      string
}

func (s *shardFlags) register(fs *flagSet) {
	fs.BoolVarP(&s.enabled, "shards", "", false,
		"split the objects between all the replicas, each holding a Lease of its own; every replica is active (not with --leader-elect)")
	fs.StringVarP(&s.group, "shard-group", "", "kreact",
		"name of the group of replicas that share the objects (the label kreact.dev/shard-group of their Leases)")
	fs.StringVarP(&s.namespace, "shard-namespace", "", "",
		"namespace of the replicas' Leases (default: the pod's namespace, else \"default\")")
	fs.StringVarP(&s.key, "shard-key", "", "uid",
		"what namespaced objects are split by: uid (even split) or namespace (a namespace's objects stay together); cluster-scoped objects are always split by uid")
	fs.DurationVar(&s.leaseDuration, "shard-lease-duration", 15*time.Second,
		"how long a replica that stopped renewing its Lease keeps its shard before the others take it over")
	fs.DurationVar(&s.renewPeriod, "shard-renew-period", 3*time.Second,
		"how often a replica renews its Lease and looks for replicas that joined or left; less than half the lease duration")
	fs.StringVarP(&s.identity, "shard-identity", "", "",
		"this replica's name in the group, unique among the running replicas (default: the host name and a random suffix, a new member per process); "+
			"a process restarted with the same name, such as a StatefulSet's pod, takes its predecessor's Lease and range over")
}

func (s *shardFlags) validate(leaderElect bool) error {
	if !s.enabled {
		return nil
	}
	switch {
	case leaderElect:
		return &usageError{Msg: "run: --shards and --leader-elect exclude each other: with --shards every replica is active"}
	case s.key != "uid" && s.key != "namespace":
		return &usageError{Msg: fmt.Sprintf("run: --shard-key must be uid or namespace, not %q", s.key)}
	case s.renewPeriod <= 0 || s.renewPeriod >= s.leaseDuration/2:
		return &usageError{Msg: fmt.Sprintf("run: --shard-renew-period (%s) must be positive and less than half --shard-lease-duration (%s)",
			s.renewPeriod, s.leaseDuration)}
	case s.group == "":
		return &usageError{Msg: "run: --shard-group must not be empty"}
	}
	return nil
}

// plan is the engine's sharding of the rules' informers.
func (s *shardFlags) plan() reaction.PlanOptions {
	return reaction.PlanOptions{Sharded: s.enabled, ShardByNamespace: s.key == "namespace"}
}

// membership returns this replica's membership, not started: it runs as
// the bottom layer of kreact run, and the informers above it start once it
// knows its range (it is a lifecycle.Readier). It deletes its Lease when it
// stops, and the others take over.
func (s *shardFlags) membership(cfg *rest.Config, logger *slog.Logger) (*shard.Membership, error) {
	return shard.Join(cfg, shard.MembershipOptions{
		Namespace: s.namespace, Group: s.group, Identity: s.identity,
		LeaseDuration: s.leaseDuration, RenewPeriod: s.renewPeriod, Logger: logger,
	})
}

// logRange logs the range of a member that is ready.
func (s *shardFlags) logRange(m *shard.Membership, logger *slog.Logger) lifecycle.Func {
	return func(context.Context) error {
		rng, _ := m.Range()
		logger.Info("sharding: this replica handles its shard of the watched objects", "identity", m.Identity(),
			"members", m.Members(), "range", rng.String(), "key", s.key)
		return nil
	}
}

// informerOptions are the informer manager's sharding options.
func (s *shardFlags) informerOptions(m *shard.Membership) dynamicinformer.Options {
	return dynamicinformer.Options{Shards: m, ShardByNamespace: s.key == "namespace"}
}
