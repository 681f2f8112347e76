package cmdline

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/client-go/tools/leaderelection"

	"github.com/kreact/kreact/leader"
)

// LeaderFlags configure leader election: with --leader-elect, only the
// replica holding a coordination.k8s.io Lease runs the rules (package
// leader).
type LeaderFlags struct {
	Enabled       bool
	Namespace     string
	Name          string
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration
}

// Register adds the --leader-elect flags to fs.
func (l *LeaderFlags) Register(fs *FlagSet) {
	fs.BoolVarP(&l.Enabled, "leader-elect", "", false,
		"run the rules only while holding a Lease, so that several replicas can run with one active and the others standing by (they report ready); a replica that loses the lease exits")
	fs.StringVarP(&l.Namespace, "leader-elect-namespace", "", "",
		"namespace of the Lease (default: the pod's namespace, else \"default\")")
	fs.StringVarP(&l.Name, "leader-elect-name", "", "kreact",
		"name of the Lease; replicas sharing it elect one leader")
	fs.DurationVar(&l.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long standbys wait after the last renewal before taking the lease over")
	fs.DurationVar(&l.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew before it stops running rules; less than the lease duration")
	fs.DurationVar(&l.RetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"how often to try to acquire or renew the lease")
}

// Validate checks the durations and the name, as client-go's leaderelection
// would, but naming the flags.
func (l *LeaderFlags) Validate() error {
	switch {
	case l.RetryPeriod <= 0:
		return &UsageError{Msg: "run: --leader-elect-retry-period must be positive"}
	case float64(l.RenewDeadline) <= leaderelection.JitterFactor*float64(l.RetryPeriod):
		return &UsageError{Msg: fmt.Sprintf("run: --leader-elect-renew-deadline (%s) must be more than %.1f × --leader-elect-retry-period (%s)",
			l.RenewDeadline, leaderelection.JitterFactor, l.RetryPeriod)}
	case l.LeaseDuration <= l.RenewDeadline:
		return &UsageError{Msg: fmt.Sprintf("run: --leader-elect-lease-duration (%s) must be more than --leader-elect-renew-deadline (%s)",
			l.LeaseDuration, l.RenewDeadline)}
	case l.Name == "":
		return &UsageError{Msg: "run: --leader-elect-name must not be empty"}
	}
	return nil
}

// Options checks the flags and returns the election's options, or nil
// without --leader-elect (leader.Lead). identity is this replica's holder
// identity, its name (replica.Replica.Name), which the scripts read
// (kreact.replica()).
func (l *LeaderFlags) Options(identity string, logger *slog.Logger) (*leader.Options, error) {
	if !l.Enabled {
		return nil, nil
	}
	if err := l.Validate(); err != nil {
		return nil, err
	}
	return &leader.Options{
		Namespace: l.Namespace, Name: l.Name, Identity: identity,
		LeaseDuration: l.LeaseDuration, RenewDeadline: l.RenewDeadline, RetryPeriod: l.RetryPeriod,
		Logger: logger,
	}, nil
}
