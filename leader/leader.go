package leader

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

// ErrLostLease is returned by Elector.Run when this replica lost its lease
// while running lead. The process must exit: its caches and
// queues belong to a term that has ended, and a restart rejoins the
// election cleanly.
var ErrLostLease = errors.New("lost the leader lease")

// podNamespaceFile is where Kubernetes mounts the pod's namespace.
const podNamespaceFile = "/var/run/secrets/kubernetes.io/serviceaccount/namespace"

// Options configure an Elector.
type Options struct {
	// Namespace and Name name the Lease. An empty Namespace means the
	// pod's namespace (PodNamespace). Replicas sharing the Lease elect one
	// leader.
	Namespace, Name string
	// Identity is this replica's holder identity. Empty means a new one
	// (NewIdentity): a restarted process is a new candidate.
	Identity string
	// LeaseDuration, RenewDeadline and RetryPeriod are client-go's
	// leaderelection durations; they must satisfy its checks.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
	// KeepLease leaves the lease held when ctx ends, as a crashed process
	// would (tests); false releases it, so that a standby takes over at
	// once.
	KeepLease bool
	// Logger receives the election's logs. Nil means slog.Default().
	Logger *slog.Logger
	// OnLeading, if set, is told false when Run starts campaigning, true
	// when lead starts and false again when it has stopped. It is called
	// from Run's goroutines, never concurrently.
	OnLeading func(leading bool)
}

// Elector runs a function only while this replica holds a
// coordination.k8s.io Lease.
type Elector struct {
	client coordinationv1client.LeasesGetter
	opts   Options
}

// New returns an Elector that campaigns through client, which should
// time its requests out within the renew deadline (NewClient does).
func New(client coordinationv1client.LeasesGetter, opts Options) (*Elector, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Namespace == "" {
		opts.Namespace = PodNamespace()
	}
	if opts.Identity == "" {
		id, err := NewIdentity()
		if err != nil {
			return nil, err
		}
		opts.Identity = id
	}
	return &Elector{client: client, opts: opts}, nil
}

// NewClient returns the Lease client for cfg that New needs: a request
// must not outlive the renew deadline; half of it leaves room for one
// retry (as client-go's NewFromKubeconfig does).
func NewClient(cfg *rest.Config, renewDeadline time.Duration) (coordinationv1client.LeasesGetter, error) {
	lcfg := rest.CopyConfig(cfg)
	lcfg.Timeout = max(renewDeadline/2, time.Second)
	client, err := coordinationv1client.NewForConfig(rest.AddUserAgent(lcfg, "leader-election"))
	if err != nil {
		return nil, fmt.Errorf("leader election: %w", err)
	}
	return client, nil
}

// Run campaigns for the Lease and, once it holds it, calls lead with a
// context that ends when ctx ends or the moment the lease is lost (not
// renewed within the renew deadline, or taken by another holder).
//
// When ctx ends, Run waits for lead to return, then releases the lease so
// a standby takes over without waiting for it to expire, and returns
// lead's error. When the lease is lost, Run waits for lead to return and
// returns ErrLostLease (joined with lead's error, if it failed otherwise
// than by the cancellation). If lead returns by itself while leading, Run
// releases the lease and returns its error. Run returns only once every
// goroutine it started has stopped. An Elector runs once.
func (e *Elector) Run(ctx context.Context, lead func(ctx context.Context) error) error {
	o := e.opts
	lock := &renewalLock{
		Interface: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name},
			Client:     e.client,
			LockConfig: resourcelock.ResourceLockConfig{Identity: o.Identity},
		},
		id: o.Identity,
	}
	log := o.Logger.With("lease", o.Namespace+"/"+o.Name, "identity", o.Identity)

	// The election runs under its own context, ended only once lead has
	// returned: releasing the lease earlier would let a standby start while
	// this replica still acts.
	electCtx, stopElection := context.WithCancel(context.WithoutCancel(ctx))
	defer stopElection()
	electCtx = klog.NewContext(electCtx, logr.FromSlogHandler(log.With("component", "leader-election").Handler()))

	t := &term{done: make(chan struct{})}
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   o.LeaseDuration,
		RenewDeadline:   o.RenewDeadline,
		RetryPeriod:     o.RetryPeriod,
		ReleaseOnCancel: !o.KeepLease,
		Name:            o.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(leaseCtx context.Context) {
				if !t.begin() {
					return
				}
				log.Info("acquired the lease; running the rules")
				e.notify(true)
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
					lock.watch(runCtx, o.RenewDeadline, lost)
				}()
				err := lead(runCtx)
				stopWatch()
				cancel()
				<-watchDone
				t.finish(err)
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(holder string) {
				if holder != o.Identity {
					log.Info("another replica holds the lease", "leader", holder)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}

	// Stop campaigning when ctx ends or lead returns by itself, once lead
	// has returned; on a lost lease, lost() has stopped it already.
	stopperDone := make(chan struct{})
	go func() {
		defer close(stopperDone)
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
	e.notify(false)
	elector.Run(electCtx)
	stopElection()
	<-stopperDone

	if t.stop() {
		<-t.done
	}
	e.notify(false)
	return t.result(ctx.Err() != nil)
}

func (e *Elector) notify(leading bool) {
	if e.opts.OnLeading != nil {
		e.opts.OnLeading(leading)
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

// result is what Run returns once the election has ended; stopped tells
// whether Run's context had ended.
func (t *term) result(stopped bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.lost:
		if t.err != nil && !errors.Is(t.err, context.Canceled) {
			return errors.Join(ErrLostLease, t.err)
		}
		return ErrLostLease
	case t.started:
		return t.err
	case stopped:
		return nil // stopped while standing by
	default:
		// The elector returns by itself only when renewing fails: here,
		// right after acquiring, before lead could start.
		return ErrLostLease
	}
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

// PodNamespace is the namespace this pod runs in, or "default" outside a
// cluster.
func PodNamespace() string {
	if ns, ok := InPod(); ok {
		return ns
	}
	return "default"
}

// InPod returns the namespace of the Pod this process runs in, and
// whether it runs in one: whether the namespace file of its
// ServiceAccount is mounted (a Pod without automountServiceAccountToken
// counts as outside).
func InPod() (namespace string, ok bool) { return namespaceIn(podNamespaceFile) }

func namespaceIn(file string) (string, bool) {
	if data, err := os.ReadFile(file); err == nil {
		if ns := strings.TrimSpace(string(data)); ns != "" {
			return ns, true
		}
	}
	return "", false
}

// NewIdentity is the hostname (the pod's name in a cluster) and a random
// suffix, so that a restarted container never mistakes its predecessor's
// lease for its own.
func NewIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	return host + "_" + hex.EncodeToString(suffix), nil
}
