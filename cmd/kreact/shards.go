package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/dynamicinformer"
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
	fs.boolVar(&s.enabled, "shards", "", false,
		"split the objects between all the replicas, each holding a Lease of its own; every replica is active (not with --leader-elect)")
	fs.stringVar(&s.group, "shard-group", "", "kreact",
		"name of the group of replicas that share the objects (the label kreact.dev/shard-group of their Leases)")
	fs.stringVar(&s.namespace, "shard-namespace", "", "",
		"namespace of the replicas' Leases (default: the pod's namespace, else \"default\")")
	fs.stringVar(&s.key, "shard-key", "", "uid",
		"what namespaced objects are split by: uid (even split) or namespace (a namespace's objects stay together); cluster-scoped objects are always split by uid")
	fs.DurationVar(&s.leaseDuration, "shard-lease-duration", 15*time.Second,
		"how long a replica that stopped renewing its Lease keeps its shard before the others take it over")
	fs.DurationVar(&s.renewPeriod, "shard-renew-period", 3*time.Second,
		"how often a replica renews its Lease and looks for replicas that joined or left; less than half the lease duration")
	fs.stringVar(&s.identity, "shard-identity", "", "",
		"this replica's name in the group, unique among the running replicas (default: the host name and a random suffix, a new member per process); "+
			"a process restarted with the same name, such as a StatefulSet's pod, takes its predecessor's Lease and range over")
}

func (s *shardFlags) validate(leaderElect bool) error {
	if !s.enabled {
		return nil
	}
	switch {
	case leaderElect:
		return &usageError{"run: --shards and --leader-elect exclude each other: with --shards every replica is active"}
	case s.key != "uid" && s.key != "namespace":
		return &usageError{fmt.Sprintf("run: --shard-key must be uid or namespace, not %q", s.key)}
	case s.renewPeriod <= 0 || s.renewPeriod >= s.leaseDuration/2:
		return &usageError{fmt.Sprintf("run: --shard-renew-period (%s) must be positive and less than half --shard-lease-duration (%s)",
			s.renewPeriod, s.leaseDuration)}
	case s.group == "":
		return &usageError{"run: --shard-group must not be empty"}
	}
	return nil
}

// plan is the engine's sharding of the rules' informers.
func (s *shardFlags) plan() reaction.PlanOptions {
	return reaction.PlanOptions{Sharded: s.enabled, ShardByNamespace: s.key == "namespace"}
}

// join starts this replica's membership and waits until it knows its
// range. The membership runs until ctx ends, then deletes its Lease; done
// is closed when it has.
func (s *shardFlags) join(ctx context.Context, cfg *rest.Config, logger *slog.Logger) (m *shard.Membership, done <-chan struct{}, err error) {
	namespace := s.namespace
	if namespace == "" {
		namespace = podNamespace()
	}
	id := s.identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, nil, fmt.Errorf("shard identity: %w", err)
		}
		// A restarted process is a new member: its predecessor's Lease
		// expires on its own.
		suffix, _ := holderIdentity()
		id = strings.ToLower(host) + "-" + suffix[strings.LastIndexByte(suffix, '_')+1:]
	}
	lcfg := rest.CopyConfig(cfg)
	lcfg.Timeout = s.renewPeriod
	client, err := coordinationv1client.NewForConfig(rest.AddUserAgent(lcfg, "shard-membership"))
	if err != nil {
		return nil, nil, fmt.Errorf("shard membership: %w", err)
	}
	m, err = shard.NewMembership(client, shard.MembershipOptions{
		Namespace: namespace, Group: s.group, Identity: id,
		LeaseDuration: s.leaseDuration, RenewPeriod: s.renewPeriod, Logger: logger,
	})
	if err != nil {
		return nil, nil, &usageError{"run: " + err.Error()}
	}
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		_ = m.Run(ctx)
	}()
	select {
	case <-m.Ready():
	case <-ctx.Done():
		<-finished
		return nil, nil, ctx.Err()
	}
	rng, _ := m.Range()
	logger.Info("sharding: this replica handles its shard of the watched objects", "identity", id,
		"members", m.Members(), "range", rng.String(), "key", s.key)
	return m, finished, nil
}

// informerOptions are the informer manager's sharding options.
func (s *shardFlags) informerOptions(m *shard.Membership) dynamicinformer.Options {
	return dynamicinformer.Options{Shards: m, ShardByNamespace: s.key == "namespace"}
}
