package replica

import (
	"os"
	"sync/atomic"

	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/leader"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/scripting"
	"github.com/kreact/kreact/shard"
)

// Options configure Join.
type Options struct {
	// Shards, if not nil, are the options of this replica's membership in
	// its shard group (shard.Join). Nil means the replica handles every
	// object.
	Shards *shard.MembershipOptions
	// ShardKey is what namespaced objects are split by: "namespace", or
	// their UID ("uid"; kreact run --shard-key).
	ShardKey string
	// Elect says the replica runs for leader: its name is then a new
	// leader identity (leader.NewIdentity), which it elects with.
	Elect bool
	// Parent, in the isolated rules' process, is the name of the replica
	// it is part of (isolation.Role.Replica). Empty in kreact run's own.
	Parent string
}

// Replica is this process as one replica among others.
type Replica struct {
	// Name is the replica's name (see the package's doc).
	Name string
	// Membership is the replica's shard membership; nil without
	// Options.Shards.
	Membership *shard.Membership
	// Layers run under every other component: the Membership, which the
	// layers above wait for until it knows its range.
	Layers lifecycle.Layers
	// Always runs beside the other components of every replica: the log
	// of the Membership's range.
	Always lifecycle.Group
	// Informers are the informer manager's options for the replica's
	// share of the objects.
	Informers dynamicinformer.Options
	// Schedules, if not nil, says whether this replica makes the ticks
	// that are once per cluster (engine.Options.Schedules).
	Schedules delivery.ScheduleOwner
	// RefuseIsolation, if set, is why isolated rules cannot run
	// (isolation.Options.Refuse).
	RefuseIsolation string

	leads func() bool
	lead  atomic.Bool // told by SetLeading
}

// Join returns this replica, with its membership (not started) when
// opts.Shards is set, whose Lease client is of cfg.
func Join(cfg *rest.Config, opts Options) (*Replica, error) {
	r := &Replica{}
	if opts.Shards != nil {
		// The membership runs as the bottom layer, and the informers
		// above it start once it knows its range (it is a
		// lifecycle.Readier). It deletes its Lease when it stops, and the
		// others take over.
		m, err := shard.Join(cfg, *opts.Shards)
		if err != nil {
			return nil, err
		}
		r.Membership, r.Layers, r.Always = m, lifecycle.Layers{m}, lifecycle.Group{m.LogRange(opts.Shards.Logger, "key", opts.ShardKey)}
		r.Informers = dynamicinformer.Options{Shards: m, ShardByNamespace: opts.ShardKey == "namespace"}
		r.Schedules = m
		r.RefuseIsolation = "not supported with --shards: the isolated rules' process cannot take part in the shard membership"
	}
	r.Name, _ = os.Hostname()
	if opts.Parent != "" {
		// The isolated rules' process runs as part of its parent, and
		// only while the parent runs its rules.
		r.Name = opts.Parent
	}
	r.lead.Store(true)
	r.leads = r.lead.Load
	if opts.Elect {
		var err error
		if r.Name, err = leader.NewIdentity(); err != nil {
			return nil, err
		}
	}
	if m := r.Membership; m != nil {
		r.Name, r.leads = m.Identity(), m.OwnsSchedules
	}
	return r, nil
}

// SetLeading tells the replica whether it holds the leader Lease
// (leader.Lead's onLeading).
func (r *Replica) SetLeading(lead bool) { r.lead.Store(lead) }

// Script is the replica as its scripts see it (engine.Options.Replica).
func (r *Replica) Script() scripting.Replica {
	return scripting.Replica{Name: r.Name, Leader: r.leads()}
}
