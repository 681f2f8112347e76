package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// errLostLeadership is returned by leaderFlags.run when this replica lost
// its lease while running the rules. The process must exit: its caches and
// queues belong to a term that has ended, and a restart rejoins the
// election cleanly.
var errLostLeadership = errors.New("lost the leader lease")

// podNamespaceFile is where Kubernetes mounts the pod's namespace.
const podNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// leaderFlags configure leader election: with --leader-elect, only the
// replica holding a coordination.k8s.io Lease runs the rules.
type leaderFlags struct {
	enabled       bool
	namespace     string
	name          string
	leaseDuration time.Duration
	renewDeadline time.Duration
	retryPeriod   time.Duration

	// notify, if set, is told false when this process starts campaigning
	// for the lease, true when it starts running the rules (at once when
	// leader election is off) and false again when it stops. It is called
	// from run's goroutines, never concurrently.
	notify func(leading bool)

	// identity, if set, replaces the generated holder identity (tests).
	identity string
	// keepLease leaves the lease held when ctx ends, as a crashed process
	// would (tests); false releases it so that a standby takes over at once.
	keepLease bool
}

func (l *leaderFlags) register(fs *flagSet) {
	fs.boolVar(&l.enabled, "leader-elect", "", false,
		"run the rules only while holding a Lease, so that several replicas can run with one active and the others standing by (they report ready); a replica that loses the lease exits")
	fs.stringVar(&l.namespace, "leader-elect-namespace", "", "",
		"namespace of the Lease (default: the pod's namespace, else \"default\")")
	fs.stringVar(&l.name, "leader-elect-name", "", "kreact",
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
		return &usageError{"run: --leader-elect-retry-period must be positive"}
	case float64(l.renewDeadline) <= leaderelection.JitterFactor*float64(l.retryPeriod):
		return &usageError{fmt.Sprintf("run: --leader-elect-renew-deadline (%s) must be more than %.1f × --leader-elect-retry-period (%s)",
			l.renewDeadline, leaderelection.JitterFactor, l.retryPeriod)}
	case l.leaseDuration <= l.renewDeadline:
		return &usageError{fmt.Sprintf("run: --leader-elect-lease-duration (%s) must be more than --leader-elect-renew-deadline (%s)",
			l.leaseDuration, l.renewDeadline)}
	case l.name == "":
		return &usageError{"run: --leader-elect-name must not be empty"}
	}
	return nil
}

// run runs lead. With leader election off it simply calls lead(ctx).
// With it on, it campaigns for the Lease and, once it holds it, calls lead
// with a context that ends when ctx ends or the moment the lease is lost
// (not renewed within the renew deadline, or taken by another holder).
//
// When ctx ends, run waits for lead to return, then releases the lease so a
// standby takes over without waiting for it to expire, and returns lead's
// error. When the lease is lost, run waits for lead to return and returns
// errLostLeadership (joined with lead's error, if it failed otherwise than
// by the cancellation). If lead returns by itself while leading, run
// releases the lease and returns its error.
func (l *leaderFlags) run(ctx context.Context, cfg *rest.Config, logger *slog.Logger, lead func(ctx context.Context) error) error {
	if !l.enabled {
		l.notifyLeading(true)
		return lead(ctx)
	}
	if err := l.validate(); err != nil {
		return err
	}
	namespace := l.namespace
	if namespace == "" {
		namespace = podNamespace()
	}
	id := l.identity
	if id == "" {
		var err error
		if id, err = holderIdentity(); err != nil {
			return err
		}
	}
	// A lease request must not outlive the renew deadline; half of it
	// leaves room for one retry (as client-go's NewFromKubeconfig does).
	lcfg := rest.CopyConfig(cfg)
	lcfg.Timeout = max(l.renewDeadline/2, time.Second)
	client, err := coordinationv1client.NewForConfig(rest.AddUserAgent(lcfg, "leader-election"))
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	lock := &renewalLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: namespace, Name: l.name},
			Client:     client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		id: id,
	}
	log := logger.With("lease", namespace+"/"+l.name, "identity", id)

	// The election runs under its own context, ended only once lead has
	// returned: releasing the lease earlier would let a standby start while
	// this replica still acts.
	electCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	electCtx = klog.NewContext(electCtx, logr.FromSlogHandler(log.With("component", "leader-election").Handler()))

	t := &term{done: make(chan struct{})}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   l.leaseDuration,
		RenewDeadline:   l.renewDeadline,
		RetryPeriod:     l.retryPeriod,
		ReleaseOnCancel: !l.keepLease,
		Name:            l.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaseCtx context.Context) {
				if !t.begin() {
					return
				}
				log.Info("acquired the lease; running the rules")
				l.notifyLeading(true)
				runCtx, cancel := context.WithCancel(ctx)
				lost := func() {
					if t.markLost() {
						log.Error("lost the lease; stopping the rules")
					}
					cancel()
					stopElection()
				}
				stopWatch := context.AfterFunc(leaseCtx, lost)
				watchDone := make(chan struct{})
				go func() {
					defer close(watchDone)
					lock.watch(runCtx, l.renewDeadline, lost)
				}()
				err := lead(runCtx)
				stopWatch()
				cancel()
				<-watchDone
				t.finish(err)
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(holder string) {
				if holder != id {
					log.Info("another replica holds the lease", "leader", holder)
				}
			},
		},
	})
	if err != nil {
		return &usageError{fmt.Sprintf("run: leader election: %v", err)}
	}

	// Stop campaigning when ctx ends or lead returns by itself, once lead
	// has returned; on a lost lease, lost() has stopped it already.
	go func() {
		select {
		case <-ctx.Done():
		case <-t.done:
		case <-electCtx.Done():
			return
		}
		if t.stop() {
			<-t.done
		}
		stopElection()
	}()

	log.Info("campaigning for the lease")
	l.notifyLeading(false)
	elector.Run(electCtx)

	if t.stop() {
		<-t.done
	}
	l.notifyLeading(false)
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.lost:
		if t.err != nil && !errors.Is(t.err, context.Canceled) {
			return errors.Join(errLostLeadership, t.err)
		}
		return errLostLeadership
	case t.started:
		return t.err
	case ctx.Err() != nil:
		return nil // stopped while standing by
	default:
		// The elector returns by itself only when renewing fails: here,
		// right after acquiring, before lead could start.
		return errLostLeadership
	}
}

func (l *leaderFlags) notifyLeading(leading bool) {
	if l.notify != nil {
		l.notify(leading)
	}
}

// term is one run's leadership: whether lead started, how it ended and
// whether the lease was lost while it ran.
type term struct {
	mu       sync.Mutex
	stopping bool // start nothing more
	started  bool // lead was called
	lost     bool // the lease was lost while lead ran
	err      error
	done     chan struct{} // closed when lead has returned, if it started
}

// begin reports whether lead may start, and records that it does.
func (t *term) begin() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopping {
		return false
	}
	t.started = true
	return true
}

// finish records lead's error.
func (t *term) finish(err error) {
	t.mu.Lock()
	t.err = err
	t.mu.Unlock()
	close(t.done)
}

// markLost records that the lease was lost while lead ran and reports
// whether this is news.
func (t *term) markLost() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.lost {
		return false
	}
	t.lost = true
	return true
}

// stop keeps lead from starting from now on and reports whether it has
// started, in which case the caller waits for done.
func (t *term) stop() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopping = true
	return t.started
}

// renewalLock remembers when this holder last wrote the lease, so that the
// rules stop the moment the renew deadline passes, without waiting for
// client-go to give up and try to release the lease first.
type renewalLock struct {
	resourcelock.Interface
	id string

	mu      sync.Mutex
	renewed time.Time
}

func (l *renewalLock) Create(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Create(ctx, r)
	l.record(r, err)
	return err
}

func (l *renewalLock) Update(ctx context.Context, r resourcelock.LeaderElectionRecord) error {
	err := l.Interface.Update(ctx, r)
	l.record(r, err)
	return err
}

func (l *renewalLock) record(r resourcelock.LeaderElectionRecord, err error) {
	if err != nil || r.HolderIdentity != l.id {
		return
	}
	l.mu.Lock()
	l.renewed = time.Now()
	l.mu.Unlock()
}

func (l *renewalLock) lastRenewal() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.renewed
}

// watch calls lost once the lease has gone unrenewed for deadline, unless
// ctx ends first.
func (l *renewalLock) watch(ctx context.Context, deadline time.Duration, lost func()) {
	timer := time.NewTimer(time.Until(l.lastRenewal().Add(deadline)))
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		left := time.Until(l.lastRenewal().Add(deadline))
		if left <= 0 {
			lost()
			return
		}
		timer.Reset(left)
	}
}

// podNamespace is the namespace this pod runs in, or "default" outside a
// cluster.
func podNamespace() string {
	if data, err := os.ReadFile(podNamespaceFile); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns
		}
	}
	return "default"
}

// holderIdentity is the hostname (the pod's name in a cluster) and a random
// suffix, so that a restarted container never mistakes its predecessor's
// lease for its own.
func holderIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return host + "_" + hex.EncodeToString(suffix), nil
}
