package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"

	"github.com/kreact/kreact/leader"
	"github.com/kreact/kreact/lifecycle"
)

// leaderFlags configure leader election: with --leader-elect, only the
// replica holding a coordination.k8s.io Lease runs the rules (package
// leader).
type leaderFlags struct {
	enabled       bool
	namespace     string
	name          string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration
}

func (l *leaderFlags) register(fs *flagSet) {
	fs.BoolVarP(&l.enabled, "leader-elect", "", false,
		"run the rules only while holding a Lease, so that several replicas can run with one active and the others standing by (they report ready); a replica that loses the lease exits")
	fs.StringVarP(&l.namespace, "leader-elect-namespace", "", "",
		"namespace of the Lease (default: the pod's namespace, else \"default\")")
	fs.StringVarP(&l.name, "leader-elect-name", "", "kreact",
		"name of the Lease; replicas sharing it elect one leader")
	fs.DurationVar(&l.leaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long standbys wait after the last renewal before taking the lease over")
	fs.DurationVar(&l.renewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew before it stops running rules; less than the lease duration")
	fs.DurationVar(&l.retryPeriod, "leader-elect-retry-period", 2*time.Second,
		"how often to try to acquire or renew the lease")
}

func (l *leaderFlags) validate() error {
	switch {
	case l.retryPeriod <= 0:
		return &usageError{Msg: "run: --leader-elect-retry-period must be positive"}
	case float64(l.renewDeadline) <= leaderelection.JitterFactor*float64(l.retryPeriod):
		return &usageError{Msg: fmt.Sprintf("run: --leader-elect-renew-deadline (%s) must be more than %.1f × --leader-elect-retry-period (%s)",
			l.renewDeadline, leaderelection.JitterFactor, l.retryPeriod)}
	case l.leaseDuration <= l.renewDeadline:
		return &usageError{Msg: fmt.Sprintf("run: --leader-elect-lease-duration (%s) must be more than --leader-elect-renew-deadline (%s)",
			l.leaseDuration, l.renewDeadline)}
	case l.name == "":
		return &usageError{Msg: "run: --leader-elect-name must not be empty"}
	}
	return nil
}

// lead returns what runs inner only while this replica leads, telling
// notify whether it does: without --leader-elect, inner itself, leading
// from the start.
func (l *leaderFlags) lead(cfg *rest.Config, logger *slog.Logger, notify func(bool), inner lifecycle.Runnable) (lifecycle.Runnable, error) {
	if !l.enabled {
		return lifecycle.Func(func(ctx context.Context) error {
			notify(true)
			return inner.Start(ctx)
		}), nil
	}
	if err := l.validate(); err != nil {
		return nil, err
	}
	client, err := leader.NewClient(cfg, l.renewDeadline)
	if err != nil {
		return nil, err
	}
	el, err := leader.New(client, leader.Options{
		Namespace: l.namespace, Name: l.name,
		LeaseDuration: l.leaseDuration, RenewDeadline: l.renewDeadline, RetryPeriod: l.retryPeriod,
		Logger: logger, OnLeading: notify,
	})
	if err != nil {
		return nil, err
	}
	return lifecycle.Func(func(ctx context.Context) error { return el.Run(ctx, inner.Start) }), nil
}
