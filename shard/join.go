package shard

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/leader"
	"github.com/kreact/kreact/lifecycle"
)

// Join returns this replica's Membership, not started, with a Lease client
// of cfg whose requests give up after a RenewPeriod. An empty
// opts.Namespace is the pod's namespace, else "default"; an empty
// opts.Identity is a new one (NewIdentity): a restarted process is then a
// new member, and its predecessor's Lease expires on its own.
func Join(cfg *rest.Config, opts MembershipOptions) (*Membership, error) {
	if opts.Namespace == "" {
		opts.Namespace = leader.PodNamespace()
	}
	if opts.Identity == "" {
		id, err := NewIdentity()
		if err != nil {
			return nil, err
		}
		opts.Identity = id
	}
	lcfg := rest.CopyConfig(cfg)
	lcfg.Timeout = opts.RenewPeriod
	client, err := coordinationv1client.NewForConfig(rest.AddUserAgent(lcfg, "shard-membership"))
	if err != nil {
		return nil, fmt.Errorf("shard membership: %w", err)
	}
	return NewMembership(client, opts)
}

// NewIdentity is leader.NewIdentity, the host name (the pod's name in a
// cluster) and a random suffix, made a valid part of a Lease's name:
// lower case, joined by '-'.
func NewIdentity() (string, error) {
	holder, err := leader.NewIdentity()
	if err != nil {
		return "", fmt.Errorf("shard identity: %w", err)
	}
	cut := strings.LastIndexByte(holder, '_')
	return strings.ToLower(holder[:cut]) + "-" + holder[cut+1:], nil
}

// Start is Run: a Membership is a lifecycle.Runnable and, with Ready, a
// lifecycle.Readier, which the layers above wait for.
func (m *Membership) Start(ctx context.Context) error { return m.Run(ctx) }

// LogRange logs this replica's range and the members, and attrs after
// them. It is for the layer above the Membership, which starts once the
// Membership is ready and knows its range.
func (m *Membership) LogRange(logger *slog.Logger, attrs ...any) lifecycle.Func {
	return func(context.Context) error {
		rng, _ := m.Range()
		logger.Info("sharding: this replica handles its shard of the watched objects",
			append([]any{"identity", m.Identity(), "members", m.Members(), "range", rng.String()}, attrs...)...)
		return nil
	}
}
