package engine

import (
	"context"
	"errors"
	"hash/fnv"
	"log/slog"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// change is one informer notification for a rule.
type change struct {
	event    scripting.EventType
	obj, old *unstructured.Unstructured
	initial  bool
	resource discovery.Resource
}

// runner runs one rule: its watches, script workers and action queue.
type runner struct {
	engine      *Engine
	rule        *rules.Rule
	resolved    *rules.Resolved
	program     *scripting.Program
	fingerprint string
	log         *slog.Logger
	ignore      []string

	queue       *actions.Queue
	cancelQueue context.CancelFunc
	queueDone   chan struct{}

	fifos    []*fifo
	runtimes []*scripting.Runtime
	workers  sync.WaitGroup
	stopTick chan struct{}

	watches []*dynamicinformer.Watch // spec.watch, then spec.reads
	readers map[schema.GroupResource][]*dynamicinformer.Watch
	stopped sync.Once
}

func startRunner(ctx context.Context, e *Engine, r *rules.Rule, prog *scripting.Program, res *rules.Resolved, fp string) (*runner, error) {
	run := &runner{
		engine:      e,
		rule:        r,
		resolved:    res,
		program:     prog,
		fingerprint: fp,
		log:         e.log.With("rule", r.Name),
		readers:     map[schema.GroupResource][]*dynamicinformer.Watch{},
	}
	for _, p := range r.IgnoredPaths() {
		run.ignore = append(run.ignore, p.String())
	}
	queueCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	run.cancelQueue = cancel
	run.queueDone = make(chan struct{})
	run.queue = actions.NewQueue(e.client, actions.Options{
		Name:            "kreact_rule_" + r.Name,
		Retries:         queueRetries(r.Retries),
		RateLimit:       r.RateLimit,
		Burst:           r.Burst,
		DryRun:          r.DryRun || e.opts.DryRun,
		Logger:          e.log, // actions carry their rule's name
		MetricsProvider: e.opts.MetricsProvider,
		OnResult: func(res actions.Result) {
			if e.opts.Observer != nil {
				e.opts.Observer.ActionResult(res)
			}
		},
	})
	go func() {
		_ = run.queue.Run(queueCtx)
		close(run.queueDone)
	}()

	host := &host{run: run}
	for range r.Workers {
		rt, err := scripting.NewRuntime(prog, host, scripting.RuntimeOptions{
			Rule:    r.Name,
			Timeout: r.Timeout,
			DryRun:  r.DryRun || e.opts.DryRun,
		})
		if err != nil {
			run.stop()
			return nil, err
		}
		f := newFIFO()
		run.fifos = append(run.fifos, f)
		run.runtimes = append(run.runtimes, rt)
		run.workers.Go(func() { run.work(rt, f) })
	}
	run.stopTick = make(chan struct{})
	if r.Every > 0 && prog.HasHandler(scripting.Tick) {
		run.workers.Go(run.tick)
	}

	for _, k := range watchKeys(res) {
		h := cache.ResourceEventHandler(cache.ResourceEventHandlerFuncs{})
		if k.handled {
			h = run.handler(k.resource)
		}
		watch, err := e.informers.Watch(k.key, r.Name, h)
		if err != nil {
			run.stop()
			return nil, err
		}
		run.watches = append(run.watches, watch)
		if k.readable {
			gr := k.key.GVR.GroupResource()
			run.readers[gr] = append(run.readers[gr], watch)
		}
	}
	return run, nil
}

// queueRetries maps spec.retries to actions.Options.Retries, where zero
// means the default and a negative number means none.
func queueRetries(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

// ruleKey is one informer a rule needs.
type ruleKey struct {
	key      dynamicinformer.Key
	resource discovery.Resource
	handled  bool // spec.watch: changes reach the script
	readable bool // serves kreact.get/list (no selectors)
}

// watchKeys lists the informers of a resolved rule: one per watched
// namespace of each spec.watch entry, and an all-namespaces one for each
// spec.reads resource that no selector-free watch already covers.
func watchKeys(res *rules.Resolved) []ruleKey {
	var keys []ruleKey
	allNamespaces := map[schema.GroupResource]bool{}
	for _, w := range res.Watch {
		namespaces := w.Watch.Namespaces
		if len(namespaces) == 0 {
			namespaces = []string{""}
		}
		readable := w.Watch.LabelSelector == "" && w.Watch.FieldSelector == ""
		for _, ns := range namespaces {
			key := dynamicinformer.Key{GVR: w.Resource.GVR, Namespace: ns, LabelSelector: w.Watch.LabelSelector, FieldSelector: w.Watch.FieldSelector}
			keys = append(keys, ruleKey{key: key, resource: w.Resource, handled: true, readable: readable})
			if readable && ns == "" {
				allNamespaces[w.Resource.GVR.GroupResource()] = true
			}
		}
	}
	for _, r := range res.Reads {
		if gr := r.GVR.GroupResource(); !allNamespaces[gr] {
			allNamespaces[gr] = true
			keys = append(keys, ruleKey{key: dynamicinformer.Key{GVR: r.GVR}, resource: r, readable: true})
		}
	}
	return keys
}

// handler turns informer notifications into changes on the workers' FIFOs.
// It only enqueues.
func (run *runner) handler(res discovery.Resource) cache.ResourceEventHandler {
	wants := func(t scripting.EventType) bool {
		return run.rule.Handles(rules.Event(t)) && run.program.HasHandler(t)
	}
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if u, ok := obj.(*unstructured.Unstructured); ok && wants(scripting.Add) {
				run.dispatch(change{event: scripting.Add, obj: u, initial: initial, resource: res})
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if ok1 && ok2 && wants(scripting.Update) {
				run.dispatch(change{event: scripting.Update, obj: n, old: o, resource: res})
			}
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok && wants(scripting.Delete) {
				run.dispatch(change{event: scripting.Delete, obj: u, resource: res})
			}
		},
	}
}

// tick queues an onTick call every spec.every on the first worker, so
// that ticks are ordered with the changes that worker handles.
func (run *runner) tick() {
	t := time.NewTicker(run.rule.Every)
	defer t.Stop()
	for {
		select {
		case <-run.stopTick:
			return
		case <-t.C:
			if obs := run.engine.opts.Observer; obs != nil {
				obs.Event(run.rule.Name, "", scripting.Tick)
			}
			run.fifos[0].push(change{event: scripting.Tick})
		}
	}
}

// dispatch sends a change to the worker that owns its object, so that the
// changes of one object are handled in order.
func (run *runner) dispatch(c change) {
	i := 0
	if n := len(run.fifos); n > 1 {
		h := fnv.New32a()
		h.Write([]byte(c.obj.GetNamespace()))
		h.Write([]byte{'/'})
		h.Write([]byte(c.obj.GetName()))
		i = int(h.Sum32() % uint32(n))
	}
	if obs := run.engine.opts.Observer; obs != nil {
		obs.Event(run.rule.Name, c.resource.GVR.GroupResource().String(), c.event)
	}
	run.fifos[i].push(c)
}

// work runs a worker: one goja runtime, one FIFO.
func (run *runner) work(rt *scripting.Runtime, f *fifo) {
	for {
		c, ok := f.pop()
		if !ok {
			return
		}
		ev := scripting.Event{Type: c.event, Object: c.obj, OldObject: c.old, Initial: c.initial, Resource: c.resource}
		if c.event == scripting.Update {
			ev.Changed = scripting.ChangedPaths(c.old.Object, c.obj.Object, run.ignore)
			if len(ev.Changed) == 0 {
				continue // resync, relist or only ignored fields
			}
		}
		start := time.Now()
		err := rt.Call(ev)
		for errors.Is(err, scripting.ErrStuck) {
			// Earlier calls are stuck in built-in code past their timeout.
			// Wait for them rather than drop this change.
			run.log.Warn("script workers stuck in built-in code; change delayed", "handler", c.event.Handler(), "object", objectName(c.obj))
			time.Sleep(time.Second)
			err = rt.Call(ev)
		}
		if obs := run.engine.opts.Observer; obs != nil {
			obs.HandlerCall(run.rule.Name, c.event, time.Since(start), err)
		}
		if err != nil {
			run.reportScriptError(err, c)
		}
	}
}

func (run *runner) reportScriptError(err error, c change) {
	attrs := []any{"handler", c.event.Handler()}
	if c.obj != nil {
		attrs = append(attrs, "resource", c.resource.GVR.GroupResource().String(), "object", objectName(c.obj))
	}
	var se *scripting.ScriptError
	if errors.As(err, &se) {
		attrs = append(attrs, "position", se.Position, "error", se.Message)
		if se.Stack != "" {
			attrs = append(attrs, "stack", se.Stack)
		}
		run.log.Error("script failed", attrs...)
		return
	}
	run.log.Error("script failed", append(attrs, "error", err)...)
}

func objectName(u *unstructured.Unstructured) string {
	if u == nil {
		return ""
	}
	if ns := u.GetNamespace(); ns != "" {
		return ns + "/" + u.GetName()
	}
	return u.GetName()
}

// hasSynced reports whether every watch of the rule has delivered its
// initial list (pending watches, for resources not served, do not count).
func (run *runner) hasSynced() bool {
	for _, w := range run.watches {
		if w.State().Phase == dynamicinformer.PhasePending {
			continue
		}
		if !w.HasSynced() {
			return false
		}
	}
	return true
}

// stop removes the rule's handlers, lets the workers finish the changes
// already queued and the action queue drain, and returns when all is done.
func (run *runner) stop() {
	run.stopped.Do(func() {
		for _, w := range run.watches {
			w.Stop()
		}
		if run.stopTick != nil {
			close(run.stopTick)
		}
		for _, f := range run.fifos {
			f.close()
		}
		run.workers.Wait()
		for _, rt := range run.runtimes {
			rt.Close()
		}
		run.cancelQueue()
		<-run.queueDone
	})
}
