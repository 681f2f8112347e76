package shard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/utils/ptr"
)

// GroupLabel is the label that marks a Lease as a member of a group of
// sharded replicas; its value is the group's name.
const GroupLabel = "kreact.dev/shard-group"

// MembershipOptions configure a Membership.
type MembershipOptions struct {
	// Namespace holds the Leases. Required.
	Namespace string
	// Group names the replicas that share the work: their Leases carry
	// GroupLabel=Group and are named GROUP-IDENTITY. Empty means "kreact".
	Group string
	// Identity names this replica; it must be unique among the group's
	// running replicas. A process restarted with its predecessor's
	// identity takes its Lease over (and, the members being the same, its
	// range); one with a new identity is a new member, and the
	// predecessor's Lease expires on its own. Required.
	Identity string
	// LeaseDuration is how long a member counts as live after its last
	// renewal, and so how long its range goes unhandled after it dies.
	// Zero means 15s.
	LeaseDuration time.Duration
	// RenewPeriod is how often the Lease is renewed and the members are
	// listed; a change of members is seen within about this long. Zero
	// means LeaseDuration/5.
	RenewPeriod time.Duration
	// Logger receives a line when the members or this replica's range
	// change. Nil means slog.Default().
	Logger *slog.Logger
}

// Membership keeps this replica's Lease renewed, follows the group's live
// members and computes this replica's range among them (Assign).
//
// A replica that cannot renew its Lease owns nothing from the moment
// two thirds of LeaseDuration have passed since its last renewal: the
// others take its range over once the Lease has expired, so that the
// overlap is bounded by the time they take to notice a change (one
// RenewPeriod), never more than a lease duration.
//
// Methods are safe for concurrent use; Run is called once.
type Membership struct {
	client coordinationv1client.LeasesGetter
	opts   MembershipOptions
	log    *slog.Logger
	now    func() time.Time

	ready     chan struct{}
	readyOnce sync.Once

	mu      sync.Mutex
	members []string
	rng     Range
	owns    bool
	renewed time.Time
	lease   *coordinationv1.Lease
	nextSub int
	subs    map[int]func()
}

// NewMembership returns a Membership that keeps its Lease through client.
// Nothing happens before Run.
func NewMembership(client coordinationv1client.LeasesGetter, opts MembershipOptions) (*Membership, error) {
	if opts.Namespace == "" || opts.Identity == "" {
		return nil, errors.New("shard membership: namespace and identity are required")
	}
	if opts.Group == "" {
		opts.Group = "kreact"
	}
	if opts.LeaseDuration <= 0 {
		opts.LeaseDuration = 15 * time.Second
	}
	if opts.RenewPeriod <= 0 {
		opts.RenewPeriod = opts.LeaseDuration / 5
	}
	if opts.RenewPeriod >= opts.LeaseDuration/2 {
		return nil, fmt.Errorf("shard membership: renew period %s must be less than half the lease duration %s", opts.RenewPeriod, opts.LeaseDuration)
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Membership{
		client: client,
		opts:   opts,
		log:    opts.Logger.With("component", "shard", "group", opts.Group, "identity", opts.Identity),
		now:    time.Now,
		ready:  make(chan struct{}),
		subs:   map[int]func(){},
	}, nil
}

// LeaseName returns the name of this replica's Lease.
func (m *Membership) LeaseName() string { return leaseName(m.opts.Group, m.opts.Identity) }

// leaseName is GROUP-IDENTITY made a valid object name: lower case, with
// any other character than a letter, a digit, '-' or '.' turned into '-'.
func leaseName(group, identity string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return '-'
	}, group+"-"+identity)
	if len(name) > 253 {
		name = name[:253]
	}
	return strings.Trim(name, "-.")
}

// Identity returns this replica's identity.
func (m *Membership) Identity() string { return m.opts.Identity }

// Ready is closed once this replica's Lease exists and the members have
// been listed: Range then says what it owns.
func (m *Membership) Ready() <-chan struct{} { return m.ready }

// Range returns this replica's range, and false while it owns nothing
// (before Ready, or when its Lease has not been renewed in time).
func (m *Membership) Range() (Range, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.rng, m.owns
}

// OwnsSchedules reports whether this replica makes the calls that are
// once per cluster rather than per object (a rule's onTick with
// spec.tickScope cluster): the replica whose range holds the start of the
// hash space, a point that is always owned by exactly one member of a
// stable group. While members disagree (about one RenewPeriod after a
// change) two replicas may both own it, and a tick may then be made
// twice or, while nobody owns it, skipped.
func (m *Membership) OwnsSchedules() bool {
	rng, ok := m.Range()
	return ok && rng.Contains(0)
}

// Members returns the live members, sorted.
func (m *Membership) Members() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.members)
}

// Subscribe calls fn after every change of Range, from Run's goroutine;
// fn must not block. The returned function unsubscribes.
func (m *Membership) Subscribe(fn func()) (unsubscribe func()) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id := m.nextSub
	m.nextSub++
	m.subs[id] = fn
	return func() {
		m.mu.Lock()
		delete(m.subs, id)
		m.mu.Unlock()
	}
}

// Run renews the Lease and follows the members every RenewPeriod until
// ctx ends, then deletes the Lease, so that the others take this
// replica's range over at once, and returns nil.
func (m *Membership) Run(ctx context.Context) error {
	m.log.Info("joining the shard group", "lease", m.opts.Namespace+"/"+m.LeaseName(),
		"leaseDuration", m.opts.LeaseDuration)
	tick := time.NewTicker(m.opts.RenewPeriod)
	defer tick.Stop()
	for {
		m.step(ctx)
		select {
		case <-ctx.Done():
			m.leave()
			return nil
		case <-tick.C:
		}
	}
}

func (m *Membership) leases() coordinationv1client.LeaseInterface {
	return m.client.Leases(m.opts.Namespace)
}

// step renews the Lease, lists the group and recomputes the range.
func (m *Membership) step(ctx context.Context) {
	rctx, cancel := context.WithTimeout(ctx, m.opts.RenewPeriod)
	defer cancel()
	if err := m.renew(rctx); err != nil {
		if ctx.Err() == nil {
			m.log.Warn("cannot renew the shard lease", "err", err)
		}
	}
	list, err := m.leases().List(rctx, metav1.ListOptions{LabelSelector: GroupLabel + "=" + m.opts.Group})
	if err != nil {
		if ctx.Err() == nil {
			m.log.Warn("cannot list the shard group's leases", "err", err)
		}
		m.update(nil, false)
		return
	}
	now := m.now()
	var live []string
	for i := range list.Items {
		l := &list.Items[i]
		holder := ptr.Deref(l.Spec.HolderIdentity, "")
		if holder == "" || holder == m.opts.Identity {
			continue
		}
		if expiry, ok := expiresAt(l); ok && now.Before(expiry) {
			live = append(live, holder)
		} else if ok && now.Sub(expiry) > 5*m.opts.LeaseDuration {
			// A replica that died without leaving: tidy up its Lease
			// (guarded, in case it came back meanwhile).
			_ = m.leases().Delete(rctx, l.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: &l.ResourceVersion}})
		}
	}
	m.update(live, true)
	m.readyOnce.Do(func() { close(m.ready) })
}

// expiresAt is when l stops counting as live.
func expiresAt(l *coordinationv1.Lease) (time.Time, bool) {
	if l.Spec.RenewTime == nil || l.Spec.LeaseDurationSeconds == nil {
		return time.Time{}, false
	}
	return l.Spec.RenewTime.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second), true
}

// renew writes the Lease's renewTime, creating the Lease if it is missing.
func (m *Membership) renew(ctx context.Context) error {
	m.mu.Lock()
	lease := m.lease
	m.mu.Unlock()
	now := metav1.NewMicroTime(m.now())
	seconds := int32((m.opts.LeaseDuration + time.Second - 1) / time.Second)
	var (
		out *coordinationv1.Lease
		err error
	)
	if lease == nil {
		out, err = m.leases().Create(ctx, &coordinationv1.Lease{
			ObjectMeta: metav1.ObjectMeta{Name: m.LeaseName(), Namespace: m.opts.Namespace,
				Labels: map[string]string{GroupLabel: m.opts.Group}},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: &m.opts.Identity, LeaseDurationSeconds: &seconds,
				AcquireTime: &now, RenewTime: &now},
		}, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) {
			// A Lease left by a predecessor of the same name: take it over.
			if out, err = m.leases().Get(ctx, m.LeaseName(), metav1.GetOptions{}); err == nil {
				lease = out
			}
		}
	}
	if lease != nil {
		next := lease.DeepCopy()
		next.Labels = map[string]string{GroupLabel: m.opts.Group}
		next.Spec.HolderIdentity = &m.opts.Identity
		next.Spec.LeaseDurationSeconds = &seconds
		next.Spec.RenewTime = &now
		out, err = m.leases().Update(ctx, next, metav1.UpdateOptions{})
		if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
			// Deleted or changed behind our back: start over next time.
			m.mu.Lock()
			m.lease = nil
			m.mu.Unlock()
		}
	}
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.lease = out
	m.renewed = m.now()
	m.mu.Unlock()
	return nil
}

// update recomputes the range from the other live members (when listed)
// and this replica's own liveness, and tells subscribers if it changed.
func (m *Membership) update(others []string, listed bool) {
	m.mu.Lock()
	// Stop before the others may take over: they wait for the whole lease
	// duration after the last renewal they saw.
	selfLive := !m.renewed.IsZero() && m.now().Sub(m.renewed) < m.opts.LeaseDuration*2/3
	members := m.members
	if listed {
		members = append(others, m.opts.Identity)
		slices.Sort(members)
	}
	var rng Range
	owns := false
	if selfLive {
		rng, owns = Assign(members, m.opts.Identity)
	}
	changed := owns != m.owns || rng != m.rng || !slices.Equal(members, m.members)
	m.members, m.rng, m.owns = members, rng, owns
	var subs []func()
	if changed {
		for _, fn := range m.subs {
			subs = append(subs, fn)
		}
	}
	m.mu.Unlock()
	if !changed {
		return
	}
	if owns {
		m.log.Info("shard range changed", "members", members, "range", rng.String())
	} else {
		m.log.Warn("this replica owns no shard: its lease is not renewed", "members", members)
	}
	for _, fn := range subs {
		fn()
	}
}

// leave deletes the Lease so that the others take over at once.
func (m *Membership) leave() {
	m.mu.Lock()
	lease := m.lease
	m.owns = false
	m.mu.Unlock()
	if lease == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), m.opts.RenewPeriod)
	defer cancel()
	err := m.leases().Delete(ctx, lease.Name, metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &lease.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		m.log.Warn("cannot delete the shard lease; the others take over when it expires", "err", err)
		return
	}
	m.log.Info("left the shard group")
}
