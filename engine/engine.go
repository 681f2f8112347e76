package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/explain"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// Options configure an Engine. The zero value is usable.
type Options struct {
	// DryRun makes every rule a dry-run rule.
	DryRun bool
	// Logger receives the engine's and the scripts' logs. Nil means
	// slog.Default().
	Logger *slog.Logger
	// Now is the scripts' clock. Nil means time.Now.
	Now func() time.Time
	// MetricsProvider receives each rule's action-queue metrics. Nil means
	// client-go's global provider.
	MetricsProvider workqueue.MetricsProvider
	// Observer, if set, is told about events, handler calls and action
	// results, for metrics. Its methods must be cheap and safe for
	// concurrent use.
	Observer Observer
	// Shards shards the informers of the rules' spec.watch entries
	// (delivery.PlanOptions): each replica handles only its shard of the
	// objects. The informer manager must have a shard source. The zero
	// value shards nothing.
	Shards delivery.PlanOptions
	// RunsElsewhere, if set, reports whether another kreact process runs
	// on a rule that a Load removes, finalizer included (package
	// isolation): its finalizers then stay on the objects for that
	// process, where those of a rule removed for good are released.
	RunsElsewhere func(removed *rules.Rule) bool
	// CPULimit, if set, is every handler call's
	// scripting.RuntimeOptions.CPULimit.
	CPULimit func() time.Duration
	// Failures, if set, is every rule's delivery.Options.Failures: told
	// of every failed handler call, a control path where Observer is for
	// metrics (package isolation moves a rule whose calls hog the
	// process; an *isolation.Isolation is one). Nil means no one is.
	Failures delivery.Failures
	// Schedules, if set, tells whether this process makes the ticks
	// that are once per cluster (delivery.Options.Schedules); with
	// sharding, the shard membership. Nil means here.
	Schedules delivery.ScheduleOwner
	// Trace is each rule's delivery.Options.Trace, which Explain
	// answers from. The zero value keeps none: Explain then tells only
	// whether the rules watch the object, and what waits for it.
	Trace delivery.TraceSize
	// Replica, if set, is the scripts' kreact.replica()
	// (scripting.RuntimeOptions.Replica). Nil means a replica named ""
	// that leads.
	Replica func() scripting.Replica
	// Asked, if set, is told of every action a rule asks for, as its
	// delivery core hands it to the action queue: in the order each
	// rule asked, before any attempt, whether or not it then succeeds.
	// It is what an offline test's recorder sees (kreact record writes
	// them as a test's expected actions). It is called from the rules'
	// workers, concurrently, and must return quickly.
	Asked func(actions.Action)
	// Admission is the configuration of the webhooks that serve the
	// rules' admission handlers, which Load checks each rule against
	// (admission.Check): a rule that watches a namespace they never
	// intercept does not load. The zero value leaves out kube-system
	// only.
	Admission admission.Options
	// Identity says whom a team's Rule acts as: a ServiceAccount of its
	// namespace, impersonated for every write the rule makes. The zero
	// value: the one a Rule names, else its namespace's "default".
	Identity Identity
}

// Observer is told what the engine does, for metrics and tests: what the
// delivery core reports, and every attempt at an action.
type Observer interface {
	delivery.Observer
	// ActionResult is called after every attempt at an action.
	ActionResult(r actions.Result)
}

// Engine runs a set of rules against a cluster. Load may be called from any
// goroutine, again and again; Run must be running for rules to start.
type Engine struct {
	client    rest.Interface
	mapper    apiresource.Resolver
	informers dynamicinformer.Watcher
	source    discovery.Source
	opts      Options
	log       *slog.Logger

	// changing serialises what starts or stops rules (Load, starting
	// waiting rules, following resource versions, the final stop), so that
	// they never interleave; it is held while rules start and stop, which
	// can take seconds. mu guards the maps only, and is held briefly.
	changing sync.Mutex

	mu      sync.Mutex
	ctx     context.Context // Run's context; nil before Run
	running map[string]*runner
	pending map[string]*pendingRule  // rules waiting for their resources
	warm    []*dynamicinformer.Watch // Warm's watches, until the next Load
	// missing is what each rule's identity lacked when it was last
	// checked (checkAccess), for Status.
	missing map[string][]Missing
	started chan struct{}
}

// pendingRule is a valid rule whose resources are not served yet.
type pendingRule struct {
	rule        *rules.Rule
	program     *scripting.Program
	fingerprint string
	reason      string
}

// plan is delivery.PlanWith with the engine's sharding, for a rule whose
// script is prog.
func (e *Engine) plan(res *rules.Resolved, prog *scripting.Program) []delivery.Informer {
	opts := e.opts.Shards
	if prog != nil {
		opts.Handlers = prog
	}
	return delivery.PlanWith(res, opts)
}

// New returns an Engine. source tells it when resources appear, so that
// rules waiting for a CRD can start.
func New(client rest.Interface, mapper apiresource.Resolver, informers dynamicinformer.Watcher, source discovery.Source, opts Options) *Engine {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Engine{
		client:    client,
		mapper:    mapper,
		informers: informers,
		source:    source,
		opts:      opts,
		log:       opts.Logger,
		running:   map[string]*runner{},
		pending:   map[string]*pendingRule{},
		missing:   map[string][]Missing{},
		started:   make(chan struct{}),
	}
}

// Run runs the loaded rules until ctx ends, then stops every rule, letting
// queued changes and actions finish, and returns.
func (e *Engine) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.ctx != nil {
		e.mu.Unlock()
		return errors.New("engine: Run called twice")
	}
	e.ctx = ctx
	close(e.started)
	e.mu.Unlock()

	cancel := e.source.Subscribe(func(d discovery.Diff) {
		if len(d.Added) > 0 {
			e.retryPending()
		}
		e.followVersions()
	})
	defer cancel()
	<-ctx.Done()

	e.changing.Lock()
	defer e.changing.Unlock()
	e.mu.Lock()
	runners := make([]*runner, 0, len(e.running))
	for _, r := range e.running {
		runners = append(runners, r)
	}
	e.running = map[string]*runner{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, r := range runners {
		wg.Go(r.stop)
	}
	wg.Wait()
	return nil
}

// Load validates a rule set (CheckRule: scripts compile, resources
// resolve) and makes it the running set: new rules start, removed rules
// stop, changed rules restart and unchanged rules keep running.
//
// Rules are isolated from each other: a rule that does not validate is
// reported in the returned error (every problem, with its position) and
// does not start, and if an earlier version of it runs, that version keeps
// running. Rules loaded from a file in keepSources (a file that did not
// parse) are kept as they are too. Load waits for Run to have started.
//
// Calls to Load are serialised (e.changing): overlapping calls run one
// after the other, each against the set the previous one left. A replaced
// rule is stopped (its queued changes and actions drained) before its new
// version starts; neither stopping nor starting (which runs the script's
// top level) blocks Status meanwhile.
func (e *Engine) Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error {
	select {
	case <-e.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	e.changing.Lock()
	defer e.changing.Unlock()
	type prepared struct {
		rule        *rules.Rule
		program     *scripting.Program
		resolved    *rules.Resolved
		fingerprint string
		waiting     string
	}
	var errs []error
	keep := map[string]bool{}
	next := make([]prepared, 0, len(rs))
	refreshed := false
	rv := newReviewer()
	for _, r := range rs {
		if err := ctx.Err(); err != nil {
			// Stopping: start nothing of a half-checked set.
			return err
		}
		keep[r.Name] = true
		fp := r.Fingerprint()
		e.mu.Lock()
		old, ok := e.running[r.Name]
		e.mu.Unlock()
		if ok && old.fingerprint == fp {
			// Unchanged and running: it was checked when it started, and
			// nothing but Load (under e.changing, as this is) stops it.
			// Not checking it again keeps a load of many rules (a
			// thousand rule objects) that changes one of them cheap.
			next = append(next, prepared{rule: r, fingerprint: fp})
			continue
		}
		checkOpts := CheckOptions{Admission: e.opts.Admission, WaitForResources: true}
		c := CheckRule(r, e.mapper, checkOpts)
		if c.NotFound && !refreshed {
			// A CRD created a moment ago may not be in the snapshot yet:
			// ask discovery once before calling a close name a typo.
			refreshed = true
			if e.refreshDiscovery(ctx) {
				c = CheckRule(r, e.mapper, checkOpts)
			}
		}
		if err := c.Err(); err != nil {
			errs = append(errs, err)
			continue
		}
		if _, _, err := e.clientFor(r); err != nil {
			errs = append(errs, err)
			continue
		}
		if c.Resolved != nil {
			missing, err := e.checkAccess(ctx, rv, r, c.Resolved, e.plan(c.Resolved, c.Program))
			if err != nil {
				errs = append(errs, err)
				continue
			}
			e.mu.Lock()
			e.missing[r.Name] = missing
			e.mu.Unlock()
		}
		next = append(next, prepared{rule: r, fingerprint: fp, program: c.Program, resolved: c.Resolved, waiting: c.Waiting})
	}

	// Decide under the lock, stop outside it (a stopping rule drains its
	// queues, which may take seconds, and Status must stay answerable for
	// the readiness probe), then start under the lock again.
	e.mu.Lock()
	for name, r := range e.running {
		if slices.Contains(keepSources, r.rule.Source) {
			keep[name] = true
		}
	}
	var stopping, releasing []*runner
	var starting []prepared
	for _, p := range next {
		if old, ok := e.running[p.rule.Name]; ok {
			if old.fingerprint == p.fingerprint {
				continue
			}
			delete(e.running, p.rule.Name)
			stopping = append(stopping, old)
			if old.rule.Finalizer && !p.rule.Finalizer {
				releasing = append(releasing, old)
			}
			e.log.Info("rule changed; restarting", "rule", p.rule.Name)
		}
		delete(e.pending, p.rule.Name)
		if p.resolved == nil {
			e.pending[p.rule.Name] = &pendingRule{rule: p.rule, program: p.program, fingerprint: p.fingerprint, reason: p.waiting}
			e.log.Warn("rule waits for its resources to appear", "rule", p.rule.Name, "reason", p.waiting)
			continue
		}
		starting = append(starting, p)
	}
	for name, r := range e.running {
		if !keep[name] {
			delete(e.running, name)
			stopping = append(stopping, r)
			if e.opts.RunsElsewhere != nil && e.opts.RunsElsewhere(r.rule) {
				e.log.Info("rule removed; another kreact process runs it", "rule", name)
				continue
			}
			if r.rule.Finalizer {
				releasing = append(releasing, r)
			}
			e.log.Info("rule removed", "rule", name)
		}
	}
	for name := range e.pending {
		if !keep[name] {
			delete(e.pending, name)
		}
	}
	for name := range e.missing {
		if !keep[name] {
			delete(e.missing, name)
		}
	}
	e.mu.Unlock()

	for _, r := range stopping {
		r.stop()
	}
	for _, r := range releasing {
		e.release(ctx, r)
	}

	for _, p := range starting {
		e.start(p.rule, p.program, p.resolved, p.fingerprint)
	}
	// The rules that run hold their own watches now.
	e.releaseWarm()
	return errors.Join(errs...)
}

// release removes the finalizer of a rule that was removed, or that
// turned spec.finalizer off, from the objects it watched, so that none is
// left undeletable. It is not called when kreact stops: the finalizers are
// what makes onDelete run for objects deleted until it is back.
func (e *Engine) release(ctx context.Context, r *runner) {
	// Every object of its namespaces, whatever the selectors: one that
	// left them while kreact was away still carries it.
	n, err := finalizers.Release(ctx, dynamic.New(e.client), r.rule.Name, r.finalizerTargets(false), finalizers.ReleaseOptions{})
	if err != nil {
		e.log.Error("finalizers of a removed rule not all released; release the rest with kreact finalizers release RULE", "rule", r.rule.Name, "finalizer", finalizers.Name(r.rule.Name), "released", n, "error", err)
		return
	}
	e.log.Info("finalizers released", "rule", r.rule.Name, "finalizer", finalizers.Name(r.rule.Name), "objects", n)
}

// start starts a rule and makes it running. The caller holds e.changing,
// which every path that starts or stops rules takes, and not e.mu: building
// the rule's runtimes runs its script's top level, which must not hold up
// Status (and /readyz). Only the swap into e.running takes e.mu.
func (e *Engine) start(r *rules.Rule, prog *scripting.Program, res *rules.Resolved, fp string) {
	run, err := startRunner(e.ctx, e, r, prog, res, fp)
	if err != nil {
		e.log.Error("rule failed to start", "rule", r.Name, "error", err)
		return
	}
	e.mu.Lock()
	old := e.running[r.Name]
	e.running[r.Name] = run
	e.mu.Unlock()
	if old != nil {
		old.stop() // not expected: whoever starts a rule stopped its old version
	}
	// watches counts spec.watch entries; informers what the rule holds
	// (one per watched namespace, its reads, none for a rule with
	// admission handlers only): they differ when memory is the question.
	e.log.Info("rule started", "rule", r.Name, "source", r.Source, "watches", len(res.Watch), "informers", len(run.plan))
	for _, w := range append(CheckReads(res, prog), CheckIgnored(res, prog)...) {
		e.log.Warn(w.Msg, "rule", r.Name, "at", w.Pos.String())
	}
}

// refreshDiscovery rediscovers the API now, when the source can (a
// *discovery.Cache), and reports whether it did.
func (e *Engine) refreshDiscovery(ctx context.Context) bool {
	r, ok := e.source.(interface{ Refresh(context.Context) error })
	if !ok {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := r.Refresh(ctx); err != nil {
		e.log.Warn("rediscovering the API before reporting unknown resources", "error", err)
		return false
	}
	return true
}

// followVersions moves running rules to the versions discovery serves now.
// A rule names a resource, not a version: when the version it was resolved
// to stops being served (a CRD drops v1 and serves v2, or is recreated with
// another version), it is restarted on the served one, and receives the
// objects as initial adds. A resource that is not served at all keeps the
// rule as it is: its watches resume when the resource is back.
func (e *Engine) followVersions() {
	e.changing.Lock()
	defer e.changing.Unlock()
	type move struct {
		old *runner
		res *rules.Resolved
	}
	var moves []move
	e.mu.Lock()
	if e.ctx.Err() != nil {
		e.mu.Unlock()
		return
	}
	served := e.source.Snapshot()
	for name, r := range e.running {
		if !slices.ContainsFunc(r.plan, func(inf delivery.Informer) bool {
			_, ok := served.Lookup(inf.Key.GVR)
			return !ok
		}) {
			continue // every version it runs on is served: no churn
		}
		res, _, err := e.resolve(r.rule, true)
		if err != nil || res == nil || samePlan(e.plan(res, r.program), r.plan) {
			continue
		}
		delete(e.running, name)
		moves = append(moves, move{old: r, res: res})
	}
	e.mu.Unlock()
	for _, m := range moves {
		m.old.stop()
		var from, to []string
		for _, inf := range m.old.plan {
			from = append(from, inf.Key.GVR.String())
		}
		for _, inf := range e.plan(m.res, m.old.program) {
			to = append(to, inf.Key.GVR.String())
		}
		e.log.Info("resource version changed; rule restarted on the served version", "rule", m.old.rule.Name,
			"from", strings.Join(slices.Compact(from), ","), "to", strings.Join(slices.Compact(to), ","))
		e.start(m.old.rule, m.old.program, m.res, m.old.fingerprint)
	}
}

// samePlan reports whether two plans start the same informers, keeping
// the same fields.
func samePlan(a, b []delivery.Informer) bool {
	return slices.EqualFunc(a, b, func(x, y delivery.Informer) bool {
		return x.Key == y.Key && x.Handled == y.Handled && x.Fields.Equal(y.Fields)
	})
}

// retryPending starts the waiting rules whose resources now resolve.
func (e *Engine) retryPending() {
	e.changing.Lock()
	defer e.changing.Unlock()
	e.mu.Lock()
	if e.ctx.Err() != nil {
		e.mu.Unlock()
		return
	}
	type ready struct {
		p   *pendingRule
		res *rules.Resolved
	}
	var starting []ready
	for name, p := range e.pending {
		res, waiting, err := e.resolve(p.rule, true)
		if err != nil {
			e.log.Error("rule cannot start", "rule", name, "error", err)
			delete(e.pending, name)
			continue
		}
		if res == nil {
			p.reason = waiting
			continue
		}
		delete(e.pending, name)
		// What Load checks once a rule resolves, a rule that waited
		// gets checked now.
		if err := append(CheckOnce(res, p.program), admission.Check(res, p.program, e.opts.Admission)...).Errors().Err(); err != nil {
			e.log.Error("rule cannot start", "rule", name, "error", err)
			continue
		}
		starting = append(starting, ready{p, res})
	}
	e.mu.Unlock()
	rv := newReviewer()
	starting = slices.DeleteFunc(starting, func(r ready) bool {
		missing, err := e.checkAccess(e.ctx, rv, r.p.rule, r.res, e.plan(r.res, r.p.program))
		if err != nil {
			e.log.Error("rule cannot start", "rule", r.p.rule.Name, "error", err)
			return true
		}
		e.mu.Lock()
		e.missing[r.p.rule.Name] = missing
		e.mu.Unlock()
		return false
	})
	for _, r := range starting {
		e.start(r.p.rule, r.p.program, r.res, r.p.fingerprint)
	}
}

// resolve resolves a rule's resources. A resource that is not served yet
// is not an error: the rule waits (resolved nil, waiting says for what).
// A name that is not served but is close to one that is, in a group that
// is served, is a typo (restmapper.NotFoundError.Misspelt) and an error,
// as in `kreact validate`; unless waitOnTypos, for a rule that was accepted
// as waiting before, which keeps waiting when a close name appears.
func (e *Engine) resolve(r *rules.Rule, waitOnTypos bool) (*rules.Resolved, string, error) {
	if waiting := waitsFor(r, e.mapper, waitOnTypos); waiting != "" {
		return nil, waiting, nil
	}
	res, err := r.Resolve(e.mapper)
	if err != nil {
		return nil, "", err
	}
	return res, "", nil
}

// Warm starts the informers a rule set needs without running any rule, so
// that a standby replica takes over with full caches, and holds them until
// ctx ends (it blocks, as a lifecycle.Runnable). Rules whose resources are
// not served yet, or whose scripts do not compile, are skipped. The next
// Load releases them all, once the rules it starts hold watches of their
// own on the same informers (which are shared, not restarted): the warm
// watches of a rule that is no longer in the set do not outlive it.
func (e *Engine) Warm(ctx context.Context, rs []*rules.Rule) error {
	defer e.releaseWarm()
	for _, r := range rs {
		res, _, err := e.resolve(r, true)
		if err != nil || res == nil {
			continue
		}
		prog, err := scripting.CompileRule(r)
		if err != nil {
			continue
		}
		for _, inf := range e.plan(res, prog) {
			w, err := e.informers.WatchFields(inf.Key, "warm:"+r.Name, cache.ResourceEventHandlerFuncs{}, inf.Fields)
			if err != nil {
				return err
			}
			e.mu.Lock()
			e.warm = append(e.warm, w)
			e.mu.Unlock()
		}
	}
	<-ctx.Done()
	return nil
}

// releaseWarm stops the watches Warm holds.
func (e *Engine) releaseWarm() {
	e.mu.Lock()
	warm := e.warm
	e.warm = nil
	e.mu.Unlock()
	for _, w := range warm {
		w.Stop()
	}
}

// WarmWatches returns how many warm watches are held, for tests.
func (e *Engine) WarmWatches() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.warm)
}

// Status describes each rule: running (and whether its watches have caught
// up) or waiting for resources.
type Status struct {
	Rule    string
	Running bool
	Synced  bool
	Waiting string
	// Queued is how many objects (and ticks) have calls waiting
	// (delivery.Core.Len); 0 for a rule that is not running.
	Queued int
	// Missing is what the rule needs (what kreact rbac grants it) and
	// the identity it acts as may not do, as the API server answered
	// when the rule last started (a SelfSubjectAccessReview per verb,
	// resource and namespace, sent as the rule's identity); nil when
	// nothing is missing, or for a rule that is not running. A running
	// rule with permissions missing runs: what it may not write fails
	// when it tries (see checkAccess for what is refused instead).
	Missing []Missing
}

// Status returns the state of every rule, sorted by name.
func (e *Engine) Status() []Status {
	var snap *discovery.Snapshot // nil serves nothing
	if e.source != nil {
		snap = e.source.Snapshot()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Status, 0, len(e.running)+len(e.pending))
	for name, r := range e.running {
		synced := r.hasSynced(snap)
		out = append(out, Status{Rule: name, Running: true, Synced: synced, Queued: r.delivery.Len(), Missing: slices.Clone(e.missing[name])})
	}
	for name, p := range e.pending {
		out = append(out, Status{Rule: name, Waiting: p.reason})
	}
	slices.SortFunc(out, func(a, b Status) int {
		switch {
		case a.Rule < b.Rule:
			return -1
		case a.Rule > b.Rule:
			return 1
		}
		return 0
	})
	return out
}

// Explain returns what each rule of the engine knows of the object of
// resource gr named namespace/name, whose current state is obj (nil when
// it does not exist), sorted by rule name: see package explain. A rule
// that waits for its resources says so. Safe for concurrent use.
func (e *Engine) Explain(gr schema.GroupResource, namespace, name string, obj *unstructured.Unstructured) []explain.Rule {
	e.mu.Lock()
	runners := make([]*runner, 0, len(e.running))
	for _, r := range e.running {
		runners = append(runners, r)
	}
	var out []explain.Rule
	for _, p := range e.pending {
		out = append(out, explain.Rule{Name: p.rule.Name, Position: p.rule.Pos.String(), Note: "not running: it waits for its resources: " + p.reason})
	}
	e.mu.Unlock()
	for _, r := range runners {
		out = append(out, explain.ForRule(r.resolved, r.delivery, gr, namespace, name, obj))
	}
	slices.SortFunc(out, func(a, b explain.Rule) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// ActionStats returns each running rule's action counters.
func (e *Engine) ActionStats() map[string]actions.Stats {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make(map[string]actions.Stats, len(e.running))
	for name, r := range e.running {
		out[name] = r.queue.Stats()
	}
	return out
}

// Finalizing returns, sorted by rule, what waits on the finalizer of each
// running rule with spec.finalizer. It makes no request and is safe to
// call from any goroutine, as often as a metrics scrape.
func (e *Engine) Finalizing() []finalizers.Waiting {
	e.mu.Lock()
	defer e.mu.Unlock()
	var out []finalizers.Waiting
	for name, r := range e.running {
		if !r.rule.Finalizer {
			continue
		}
		n, oldest := r.delivery.Finalizing()
		out = append(out, finalizers.Waiting{Rule: name, Objects: n, Oldest: oldest})
	}
	slices.SortFunc(out, func(a, b finalizers.Waiting) int { return strings.Compare(a.Rule, b.Rule) })
	return out
}
