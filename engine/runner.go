package engine

import (
	"context"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// runner runs one rule: its informers, its delivery.Core (which also
// schedules its ticks and timers) with one script runtime per worker, and
// its action queue.
type runner struct {
	engine      *Engine
	rule        *rules.Rule
	resolved    *rules.Resolved
	program     *scripting.Program
	fingerprint string

	plan     []delivery.Informer
	watches  []*dynamicinformer.Watch // watches[i] serves plan[i]
	delivery *delivery.Core
	queue    *actions.Queue
	runtimes []*scripting.Runtime

	// stopDelivery ends the delivery; stopQueue then lets
	// the action queue drain what the last calls committed.
	stopDelivery, stopQueue context.CancelFunc
	deliveryDone            sync.WaitGroup
	queueDone               chan struct{}
	stopped                 sync.Once
}

func startRunner(ctx context.Context, e *Engine, r *rules.Rule, prog *scripting.Program, res *rules.Resolved, fp string) (*runner, error) {
	run := &runner{
		engine:      e,
		rule:        r,
		resolved:    res,
		program:     prog,
		fingerprint: fp,
		plan:        e.plan(res, prog),
		queueDone:   make(chan struct{}),
	}
	dryRun := r.DryRun || e.opts.DryRun
	client, user, err := e.clientFor(r)
	if err != nil {
		return nil, err
	}
	run.queue = actions.NewQueue(client, actions.Options{
		ActingAs:        user,
		Name:            "kreact_rule_" + r.Name,
		Workers:         r.ActionWorkers,
		Retries:         queueRetries(r.Retries),
		RateLimit:       r.RateLimit,
		Burst:           r.Burst,
		DryRun:          dryRun,
		AllowURL:        r.AllowsHTTP, // every redirect hop, as the first URL
		Logger:          e.log,        // actions carry their rule's name
		MetricsProvider: e.opts.MetricsProvider,
		OnResult: func(res actions.Result) {
			if e.opts.Observer != nil {
				e.opts.Observer.ActionResult(res)
			}
		},
	})
	var observer delivery.Observer
	if e.opts.Observer != nil {
		observer = e.opts.Observer
	}
	var sink delivery.Sink = run.queue
	if e.opts.Asked != nil {
		sink = askedSink{Queue: run.queue, asked: e.opts.Asked}
	}
	run.delivery = delivery.New(r, prog, sink, delivery.Options{
		Logger:          e.log,
		Observer:        observer,
		Failures:        e.opts.Failures,
		MetricsProvider: e.opts.MetricsProvider,
		Cache:           watchCache{run},
		Schedules:       e.opts.Schedules,
		Trace:           e.opts.Trace,
	})

	host := &host{run: run}
	callers := make([]delivery.Caller, 0, r.Workers)
	for range r.Workers {
		rt, err := scripting.NewRuntime(prog, host, scripting.RuntimeOptions{
			Rule:        r.Name,
			Timeout:     r.Timeout,
			MaxActions:  r.MaxActions,
			MemoryLimit: r.MemoryLimit,
			CPULimit:    e.opts.CPULimit,
			DryRun:      dryRun,
			Replica:     e.opts.Replica,
		})
		if err != nil {
			for _, rt := range run.runtimes {
				rt.Close()
			}
			run.delivery.ShutDown()
			return nil, err
		}
		run.runtimes = append(run.runtimes, rt)
		callers = append(callers, rt)
	}

	// The queue outlives the engine's context by its drain time, so that
	// the actions of calls that succeeded are still executed on shutdown.
	queueCtx, stopQueue := context.WithCancel(context.WithoutCancel(ctx))
	deliveryCtx, stopDelivery := context.WithCancel(ctx)
	run.stopQueue, run.stopDelivery = stopQueue, stopDelivery
	go func() {
		_ = run.queue.Run(queueCtx)
		close(run.queueDone)
	}()

	// The watches are all registered before the delivery runs, which
	// reads them (watchCache); changes observed meanwhile wait queued.
	for i, inf := range run.plan {
		h := cache.ResourceEventHandler(cache.ResourceEventHandlerFuncs{})
		if inf.Handled {
			h = run.delivery.Handler(i, inf.Resource)
		}
		watch, err := e.informers.WatchFields(inf.Key, r.Name, h, inf.Fields)
		if err != nil {
			run.stop()
			return nil, err
		}
		run.watches = append(run.watches, watch)
	}
	run.deliveryDone.Go(func() { run.delivery.Run(deliveryCtx, callers) })
	if r.Finalizer && !dryRun {
		run.deliveryDone.Go(func() { run.releaseStrays(deliveryCtx) })
	}
	return run, nil
}

// releaseStrays removes the rule's finalizer from the objects that carry
// it and that its watches no longer select: their labels left the
// selector while kreact was away, or this version of the rule selects
// less than the one before. Nothing would ever call onDelete for them or
// let them go. It runs beside the delivery at every start of the rule,
// with kreact's own identity, as the release of a removed rule does.
func (run *runner) releaseStrays(ctx context.Context) {
	e, name := run.engine, run.rule.Name
	n, err := finalizers.ReleaseStrays(ctx, dynamic.New(e.client), name, run.finalizerTargets(true), finalizers.ReleaseOptions{})
	switch {
	case err != nil && ctx.Err() == nil:
		e.log.Error("finalizers of objects the rule no longer selects not all released; release them with kreact finalizers release RULE", "rule", name, "finalizer", finalizers.Name(name), "released", n, "error", err)
	case n > 0:
		e.log.Info("finalizers released from objects the rule no longer selects", "rule", name, "finalizer", finalizers.Name(name), "objects", n)
	}
}

// finalizerTargets is where the rule's finalizer may be: the resource and
// namespace of each of its watches, with the watch's selectors if
// selected.
func (run *runner) finalizerTargets(selected bool) []finalizers.Target {
	var targets []finalizers.Target
	for _, inf := range run.plan {
		if !inf.Handled {
			continue
		}
		t := finalizers.Target{Resource: inf.Resource, Namespace: inf.Key.Namespace}
		if selected {
			t.LabelSelector, t.FieldSelector = inf.Key.LabelSelector, inf.Key.FieldSelector
		}
		targets = append(targets, t)
	}
	return targets
}

// askedSink is the action queue of a rule, telling Options.Asked of each
// action it takes.
type askedSink struct {
	*actions.Queue
	asked func(actions.Action)
}

func (s askedSink) Execute(ctx context.Context, a actions.Action, done func(error)) {
	s.asked(a)
	s.Queue.Execute(ctx, a, done)
}

func (s askedSink) EnqueueResult(a actions.Action, done func(error)) {
	s.asked(a)
	s.Queue.EnqueueResult(a, done)
}

// watchCache is the delivery.Cache of a runner: source i is plan[i]'s
// watch.
type watchCache struct{ run *runner }

func (c watchCache) Get(source int, namespace, name string) (*unstructured.Unstructured, bool) {
	obj, found, err := c.run.watches[source].Get(namespace, name)
	return obj, err == nil && found
}

func (c watchCache) Newer(source int, namespace, name string, uid types.UID, rv string) (*unstructured.Unstructured, bool) {
	obj, found, err := c.run.watches[source].GetNewer(namespace, name, uid, rv)
	return obj, err == nil && found
}

// queueRetries maps spec.retries to actions.Options.Retries, where zero
// means the default and a negative number means none.
func queueRetries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// hasSynced reports whether every watch of the rule has delivered its
// initial list. A pending watch counts as caught up when its resource is
// not served (a CRD not created yet: there is nothing to list), but not
// when snap serves it: every new watch is pending too, until its
// informer's goroutine first looks the resource up, and would otherwise
// count as caught up before anything was listed. Each watch's state is
// read once, so that one moving from pending to starting between two
// reads cannot pass as caught up.
func (run *runner) hasSynced(snap *discovery.Snapshot) bool {
	for _, w := range run.watches {
		if w.State().Phase == dynamicinformer.PhasePending {
			if _, served := snap.Lookup(w.Key().GVR); served {
				return false
			}
			continue
		}
		if !w.HasSynced() {
			return false
		}
	}
	return true
}

// stop removes the rule's handlers, lets the calls under way finish
// (each is bounded by the rule's timeout; calls not started are dropped,
// see package delivery), lets the action queue drain for its drain time,
// and returns when all is done.
func (run *runner) stop() {
	run.stopped.Do(func() {
		for _, w := range run.watches {
			w.Stop()
		}
		run.stopDelivery()
		run.deliveryDone.Wait()
		for _, rt := range run.runtimes {
			rt.Close()
		}
		run.stopQueue()
		<-run.queueDone
	})
}
