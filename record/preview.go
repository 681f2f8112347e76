package record

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/ruletest"
)

// PreviewOptions configure Preview. The zero value hands the rules every
// object they watch, as kreact run does.
type PreviewOptions struct {
	// Namespace, if set, hands the rules only the objects of that
	// namespace (and cluster-scoped ones).
	Namespace string
	// LabelSelector, if set, hands the rules only the objects it matches.
	LabelSelector string
	// Logger receives the preview's logs. Nil means slog.Default().
	Logger *slog.Logger
	// RulesLogger receives the engine's and the rules' logs. Nil means
	// Logger.
	RulesLogger *slog.Logger
	// Progress is how often a wait for the rules is reported on Logger.
	// Zero means every 5 seconds.
	Progress time.Duration
}

// Planned is one action a preview found a rule would take.
type Planned struct {
	// Action is the action as the rule asked for it, which kreact run
	// would send.
	Action actions.Action
	// Fields are the action as a kreact test case expects it, with its
	// rule's name (ruletest.ActionFields).
	Fields ruletest.Fields
	// Before is the target object when the preview ended, nil when there
	// is none; After is what the API server answered the action's dry
	// run with (nil for a delete, and for actions that change no object:
	// events and HTTP requests), both trimmed (Trim). Neither is set for
	// an action that changes no object.
	Before, After *unstructured.Unstructured
	// Err is why the API server refused the dry run, if it did: kreact
	// run's action would fail the same way.
	Err string
}

// Plan is what one rule set would do to the cluster's objects now: the
// actions its handlers ask for when handed every object they watch, as
// kreact run hands them at start (the initial adds).
type Plan struct {
	// Objects is how many objects the rules were handed (one per rule
	// that watches it).
	Objects int
	// Actions are the actions asked for, in the order asked.
	Actions []Planned
	// Errors are the errors of the handler calls that failed, each once.
	Errors []string
	// Waiting are the rules that did not run, with why: their resources
	// are not served (any more: the commands refuse a rule whose
	// resources are not served when they check it).
	Waiting []string
}

// Preview is kreact preview: it starts stack and runs each rule set of
// sets in turn in dry-run with package engine, as kreact record does
// (the same delivery, permission checks and actions as kreact run, every
// write sent with dryRun=All), until its handlers have been handed every
// object they watch and their calls and actions are done; and returns
// each set's Plan, once everything it started has stopped.
func Preview(ctx context.Context, stack *clientstack.Stack, sets [][]*rules.Rule, opts PreviewOptions) ([]Plan, error) {
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RulesLogger == nil {
		opts.RulesLogger = opts.Logger
	}
	if opts.Progress <= 0 {
		opts.Progress = 5 * time.Second
	}
	plans := make([]Plan, len(sets))
	each := func(ctx context.Context) error {
		for i, rs := range sets {
			var err error
			if plans[i], err = previewSet(ctx, stack, rs, opts); err != nil {
				return err
			}
		}
		return nil
	}
	if err := (lifecycle.Layers{stack, lifecycle.Func(each)}).Start(ctx); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("preview interrupted: %w", err)
	}
	return plans, nil
}

// previewSet runs rs on stack's started informers until they are done
// with the initial adds, then stops them and returns their Plan.
func previewSet(ctx context.Context, stack *clientstack.Stack, rs []*rules.Rule, opts PreviewOptions) (Plan, error) {
	rec, err := New(rs, Options{Namespace: opts.Namespace, LabelSelector: opts.LabelSelector})
	if err != nil {
		return Plan{}, err
	}
	client, kept, err := captureClient(stack.Config)
	if err != nil {
		return Plan{}, err
	}
	obs := &previewObserver{Recorder: rec, errors: map[string]bool{}}
	eng := engine.New(client, stack.Mapper, rec.ScopeAll(stack.Informers), stack.Discovery,
		engine.Options{DryRun: true, Logger: opts.RulesLogger, Asked: obs.Asked, Observer: obs})
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	ran := make(chan error, 1)
	go func() { ran <- eng.Run(runCtx) }()
	waitErr := func() error {
		if err := eng.Load(runCtx, rs); err != nil {
			if ctx.Err() != nil {
				return nil // interrupted: Preview says so
			}
			return &LoadError{err}
		}
		return obs.wait(runCtx, eng, stack.Informers, opts)
	}()
	// Taken while the rules run: a stopped engine runs none.
	statuses := eng.Status()
	// The calls under way finish and their actions drain (engine.Run):
	// nothing waits to be called once wait returns.
	stop()
	if err := <-ran; err != nil {
		return Plan{}, err
	}
	if waitErr != nil {
		return Plan{}, waitErr
	}
	return obs.plan(ctx, stack, kept, statuses, opts.Logger), nil
}

// previewObserver is the Recorder with what a preview needs besides: the
// actions themselves, the calls' errors and the objects handed.
type previewObserver struct {
	*Recorder

	mu      sync.Mutex
	asked   []actions.Action
	results map[string][]actions.Result // final results, by action key
	settled int
	calls   int
	objects int
	errors  map[string]bool
	errList []string
}

// Asked records a as the Recorder does, and the action itself.
func (o *previewObserver) Asked(a actions.Action) {
	o.Recorder.Asked(a)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.asked = append(o.asked, a)
}

func (o *previewObserver) Event(_, _ string, t event.Type) {
	if t == event.Add {
		o.mu.Lock()
		o.objects++
		o.mu.Unlock()
	}
}

func (o *previewObserver) HandlerCall(_ string, _ event.Type, _ time.Duration, err error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.calls++
	if err != nil && !errors.Is(err, event.ErrClosed) {
		if msg := err.Error(); !o.errors[msg] {
			o.errors[msg] = true
			o.errList = append(o.errList, msg)
		}
	}
}

func (o *previewObserver) ActionResult(r actions.Result) {
	switch r.Outcome {
	case actions.Retrying, actions.Waiting:
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.results == nil {
		o.results = map[string][]actions.Result{}
	}
	k := actionKey(r.Action)
	o.results[k] = append(o.results[k], r)
	o.settled++
}

// wait returns once every rule that runs has been handed the objects it
// watches and none has a call waiting or an action unsettled, or when
// ctx ends; it reports its progress every opts.Progress. A watch that
// the API server refuses (forbidden, or failed as asked) is an error:
// kreact run would wait for it, retrying, but a preview would show none
// of its objects' actions.
func (o *previewObserver) wait(ctx context.Context, eng *engine.Engine, informers *dynamicinformer.Manager, opts PreviewOptions) error {
	start := time.Now()
	last := start
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		statuses := eng.Status()
		behind := engine.RulesBehind(statuses)
		queued := 0
		for _, s := range statuses {
			queued += s.Queued
		}
		o.mu.Lock()
		asked, settled, calls, objects := len(o.asked), o.settled, o.calls, o.objects
		o.mu.Unlock()
		if len(behind) == 0 && queued == 0 && settled >= asked {
			return nil
		}
		var theirs []dynamicinformer.WatchStatus
		for _, s := range informers.Status() {
			if !slices.ContainsFunc(s.Owners, func(owner string) bool { return slices.Contains(behind, owner) }) {
				continue
			}
			if s.Phase == dynamicinformer.PhaseForbidden || s.Phase == dynamicinformer.PhaseFailed {
				return fmt.Errorf("rule %s: %w", strings.Join(s.Owners, ","), s.Err)
			}
			theirs = append(theirs, s)
		}
		if time.Since(last) >= opts.Progress {
			last = time.Now()
			what := []any{"elapsed", time.Since(start).Round(time.Second).String(), "objects", objects, "calls", calls, "waiting", queued, "actions", asked}
			if len(behind) > 0 {
				summary, _ := dynamicinformer.Describe(theirs)
				what = append(what, "listing", strings.Join(behind, ","), "informers", summary)
			}
			opts.Logger.Info("previewing: the rules are handling the objects", what...)
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// plan returns what o saw as a Plan, with each action's diff: its target
// as it is now, read from the API server, and the API server's answer to
// its dry run (kept).
func (o *previewObserver) plan(ctx context.Context, stack *clientstack.Stack, kept *capture, statuses []engine.Status, logger *slog.Logger) Plan {
	o.mu.Lock()
	defer o.mu.Unlock()
	p := Plan{Objects: o.objects, Errors: o.errList}
	for _, s := range statuses {
		if !s.Running {
			p.Waiting = append(p.Waiting, s.Rule+": "+s.Waiting)
		}
	}
	p.Actions = make([]Planned, len(o.asked))
	for i, a := range o.asked {
		if !o.dryRun[a.Rule] {
			a.DryRun = false
		}
		pl := Planned{Action: a, Fields: ruletest.ActionFields(a, true)}
		k := actionKey(a)
		if rs := o.results[k]; len(rs) > 0 {
			if rs[0].Err != nil {
				pl.Err = rs[0].Err.Error()
			}
			o.results[k] = rs[1:]
		}
		p.Actions[i] = pl
	}
	read := newTargets(stack.Client, logger, p.Actions)
	// Conditions take the writes to their paths left by the others,
	// whose bodies say whose they are.
	for _, conditions := range []bool{false, true} {
		for i := range p.Actions {
			pl := &p.Actions[i]
			if (pl.Action.Verb == actions.SetCondition) != conditions || !changesObject(pl.Action.Verb) {
				continue
			}
			pl.Before = read.current(ctx, pl.Action)
			if pl.Action.Verb != actions.Delete && pl.Err == "" {
				if after := kept.answer(pl.Action); after != nil {
					pl.After = Trim(after)
					if pl.Action.Verb == actions.Create {
						// Made up by the dry run; kreact run's create
						// gets others.
						unstructured.RemoveNestedField(pl.After.Object, "metadata", "uid")
						unstructured.RemoveNestedField(pl.After.Object, "metadata", "creationTimestamp")
					}
				} else if pl.Action.Verb == actions.SetCondition {
					// A condition that already reads as asked writes
					// nothing.
					pl.After = pl.Before
				}
			}
		}
	}
	return p
}

// changesObject reports whether an action of verb v writes its target.
func changesObject(v actions.Verb) bool {
	switch v {
	case actions.Create, actions.Apply, actions.Patch, actions.Delete, actions.SetCondition:
		return true
	}
	return false
}

// targets reads the targets of actions from the API server, trimmed: a
// list of each resource and namespace that many actions target (a rule
// over every object of a namespace), rather than a get per object.
type targets struct {
	client dynamic.Interface
	logger *slog.Logger
	// many counts the targets of each collection; lists holds those
	// listed, by name (nil when the list failed: each object is got).
	many  map[collection]int
	lists map[collection]map[string]*unstructured.Unstructured
}

type collection struct {
	gvr        schema.GroupVersionResource
	namespaced bool
	namespace  string
}

// listAbove is how many targets in one collection make targets list it.
const listAbove = 10

func newTargets(client dynamic.Interface, logger *slog.Logger, as []Planned) *targets {
	t := &targets{client: client, logger: logger, many: map[collection]int{}, lists: map[collection]map[string]*unstructured.Unstructured{}}
	for _, pl := range as {
		if changesObject(pl.Action.Verb) {
			t.many[collectionOf(pl.Action)]++
		}
	}
	return t
}

func collectionOf(a actions.Action) collection {
	c := collection{gvr: a.Resource, namespaced: a.Namespaced}
	if a.Namespaced {
		c.namespace = a.Namespace
	}
	return c
}

func (t *targets) resource(c collection) dynamic.ResourceInterface {
	if c.namespaced {
		return t.client.Resource(c.gvr).Namespace(c.namespace)
	}
	return t.client.Resource(c.gvr)
}

// current returns the target of a as it is, nil when it does not exist
// or cannot be read (a create with generateName has no name to read).
func (t *targets) current(ctx context.Context, a actions.Action) *unstructured.Unstructured {
	name := a.Name
	if a.Verb == actions.Create {
		name, _, _ = unstructured.NestedString(a.Object, "metadata", "name")
	}
	if name == "" {
		return nil
	}
	c := collectionOf(a)
	if t.many[c] > listAbove {
		list, listed := t.lists[c]
		if !listed {
			list = t.list(ctx, c)
			t.lists[c] = list
		}
		if list != nil {
			return list[name]
		}
	}
	obj, err := t.resource(c).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if !apierrors.IsNotFound(err) {
			t.logger.Warn("preview: the target of an action cannot be read; its diff shows all of it", "err", err)
		}
		return nil
	}
	return Trim(obj)
}

// list returns the objects of c by name, nil when they cannot be listed.
func (t *targets) list(ctx context.Context, c collection) map[string]*unstructured.Unstructured {
	out := map[string]*unstructured.Unstructured{}
	opts := metav1.ListOptions{Limit: 500}
	for {
		l, err := t.resource(c).List(ctx, opts)
		if err != nil {
			t.logger.Debug("preview: targets not listed; getting each", "resource", c.gvr.GroupResource(), "namespace", c.namespace, "err", err)
			return nil
		}
		for i := range l.Items {
			out[l.Items[i].GetName()] = Trim(&l.Items[i])
		}
		if opts.Continue = l.GetContinue(); opts.Continue == "" {
			return out
		}
	}
}

// actionKey identifies an action by everything it asks, to find its
// results again.
func actionKey(a actions.Action) string {
	a.DryRun = false
	return fmt.Sprintf("%#v", ruletest.ActionFields(a, true))
}
