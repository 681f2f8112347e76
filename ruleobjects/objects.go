package ruleobjects

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"golang.org/x/time/rate"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/rules"
)

// The resources of the two kinds.
var (
	RulesGVR        = schema.GroupVersionResource{Group: rules.Group, Version: rules.Version, Resource: "rules"}
	ClusterRulesGVR = schema.GroupVersionResource{Group: rules.Group, Version: rules.Version, Resource: "clusterrules"}
)

// Options configure Run.
type Options struct {
	// Informers watches the two kinds. Required.
	Informers *dynamicinformer.Manager
	// Loader is where the rules go: the rule objects' part of an
	// engine.Combined. Required.
	Loader engine.StatusLoader
	// Client writes the objects' status; nil writes none (the isolated
	// rules' process leaves that to kreact run's own).
	Client dynamic.Interface
	// Counts and Actions are the rules' counts (metrics.Recorder.RuleCounts,
	// engine.Engine.ActionStats); nil counts nothing.
	Counts  func() map[string]metrics.RuleCounts
	Actions func() map[string]actions.Stats
	// Elsewhere names the rules that run in the isolated rules' process
	// (isolation.Isolation.RulesElsewhere); nil means none.
	Elsewhere func() []string
	// Debounce is how long after a change the objects are loaded, so that
	// changes that come together load together; 0 means 100ms.
	Debounce time.Duration
	// Refresh is how often the statuses are looked at again (counts, a
	// rule that finished syncing) and the longest a count waits to be
	// written; 0 means 30s.
	Refresh time.Duration
	// WritesPerSecond bounds the status writes of all objects together;
	// 0 means 20 a second (a burst of 100).
	WritesPerSecond float64
	// Admission marks the runner that keeps the admission server's rule
	// objects (Loader is its part of an engine.Combined): it writes no
	// status, and logs only what the admission server says of the rules,
	// for the engine's runner logs the rest.
	Admission bool
	// Limits are what a team's Rule may have beyond its namespace
	// (rules.TenantLimits.Check, admission.TenantCheck); a Rule that asks
	// for more does not run, and its status says why.
	Limits rules.TenantLimits
	// Served tells whether the API server serves a resource (the CRDs
	// are installed); nil means it does. Until the watch of a served kind
	// has delivered its initial list, nothing is loaded, so that the
	// first load has every object.
	Served func(schema.GroupVersionResource) bool
	// Loaded, if set, is called after each load (of the engine's runner:
	// not with Admission), the first one too, even with no object.
	Loaded func()
	// Logger receives the loads' lines. Nil means slog.Default().
	Logger *slog.Logger
}

// Run loads the rule objects into opts.Loader and keeps them in step with
// the cluster, writing their status, until ctx ends.
func Run(ctx context.Context, opts Options) error {
	r := newRunner(opts)
	changed := make(chan struct{}, 1)
	signal := func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	h := cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { signal() },
		UpdateFunc: func(old, cur any) {
			// A status write (this runner's own) changes neither.
			if specChanged(old, cur) {
				signal()
			}
		},
		DeleteFunc: func(any) { signal() },
	}
	var watches []*dynamicinformer.Watch
	for _, gvr := range []schema.GroupVersionResource{RulesGVR, ClusterRulesGVR} {
		w, err := opts.Informers.Watch(dynamicinformer.Key{GVR: gvr}, "rule objects", h)
		if err != nil {
			return fmt.Errorf("rule objects: %w", err)
		}
		defer w.Stop()
		watches = append(watches, w)
	}
	// Statuses are written on a goroutine of their own: a thousand of
	// them wait for the write limit, and a load must not wait behind them.
	// A status is first written a moment after its load (settleTime), so
	// that a rule that starts and fills its caches at once gets one write
	// (Running), not three (Loading, Syncing, Running).
	kick := make(chan struct{}, 1)
	done := make(chan struct{})
	defer func() { <-done }()
	go func() {
		defer close(done)
		tick := time.NewTicker(r.refresh)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-kick:
			case <-tick.C:
			}
			r.writeStatuses(ctx, time.Now())
		}
	}()
	if !r.settle(ctx, watches) {
		return nil
	}
	select {
	case changed <- struct{}{}: // the first load, objects or none
	default:
	}
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(r.debounce):
		}
		r.load(ctx, list(watches))
		if opts.Loaded != nil && !opts.Admission && ctx.Err() == nil {
			opts.Loaded()
		}
		time.AfterFunc(settleTime, func() {
			select {
			case kick <- struct{}{}:
			default:
			}
		})
	}
}

// settleTime is how long after a load its statuses are written.
const settleTime = time.Second

// settle waits until each watch has delivered its initial list, or its
// kind is not served (the CRDs are not installed: there is nothing to
// list until they are, and the watch starts by itself then), or kreact
// may not list it (the informer layer logs that, and retries). It
// reports false when ctx ends first.
func (r *runner) settle(ctx context.Context, watches []*dynamicinformer.Watch) bool {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		settled := true
		for _, w := range watches {
			switch w.State().Phase {
			case dynamicinformer.PhaseStarting:
				settled = false
			case dynamicinformer.PhasePending:
				if r.opts.Served == nil || r.opts.Served(w.Key().GVR) {
					settled = false // served: its informer is about to start
				}
			}
		}
		if settled {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-tick.C:
		}
	}
}

// specChanged reports whether an update changed what a rule is made of:
// the spec (the generation) or the description.
func specChanged(old, cur any) bool {
	o, ok1 := old.(*unstructured.Unstructured)
	c, ok2 := cur.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return true
	}
	return o.GetGeneration() != c.GetGeneration() || o.GetUID() != c.GetUID() ||
		o.GetAnnotations()[rules.DescriptionAnnotation] != c.GetAnnotations()[rules.DescriptionAnnotation]
}

// list returns the objects the watches hold now.
func list(watches []*dynamicinformer.Watch) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, w := range watches {
		objs, err := w.List("", nil)
		if err == nil {
			out = append(out, objs...)
		}
	}
	return out
}

// runner is Run's state: what it knows of each object, by Source.
type runner struct {
	mu       sync.Mutex // objects, and each object's fields
	opts     Options
	log      *slog.Logger
	debounce time.Duration
	refresh  time.Duration
	limit    *rate.Limiter
	objects  map[string]*object
}

// object is what is known of one rule object.
type object struct {
	ref        rules.ObjectRef
	gvr        schema.GroupVersionResource
	uid        types.UID
	generation int64
	// parsed is the version of the spec that rule and parseErr are of:
	// its generation and description.
	parsedGen   int64
	parsedDesc  string
	rule        *rules.Rule
	parseErr    error
	problems    diag.ErrorList // of the current generation: parse and load
	running     int64          // the generation that runs; 0 for none
	status      map[string]any // as on the object when last seen
	written     string         // what was last written, but the counts
	writtenAt   time.Time
	countsAtWr  string
	loggedGen   int64
	objectFound bool
}

func newRunner(opts Options) *runner {
	r := &runner{opts: opts, log: opts.Logger, debounce: opts.Debounce, refresh: opts.Refresh, objects: map[string]*object{}}
	if r.log == nil {
		r.log = slog.Default()
	}
	if r.debounce <= 0 {
		r.debounce = 100 * time.Millisecond
	}
	if r.refresh <= 0 {
		r.refresh = 30 * time.Second
	}
	perSecond := opts.WritesPerSecond
	if perSecond <= 0 {
		perSecond = 20
	}
	r.limit = rate.NewLimiter(rate.Limit(perSecond), 100)
	return r
}

// load parses the objects (again only those whose spec changed), loads
// their rules, and notes each one's problems.
func (r *runner) load(ctx context.Context, objs []*unstructured.Unstructured) {
	r.mu.Lock()
	defer r.mu.Unlock()
	seen := map[string]bool{}
	var good []*rules.Rule
	var failed []string
	for _, u := range objs {
		ref, err := rules.ObjectOf(u.Object)
		if err != nil {
			continue // not a rule object: the watch is of the two kinds
		}
		src := ref.Source()
		seen[src] = true
		o := r.objects[src]
		if o == nil || o.uid != u.GetUID() {
			o = &object{ref: ref}
			r.objects[src] = o
		}
		o.gvr = RulesGVR
		if ref.Namespace == "" {
			o.gvr = ClusterRulesGVR
		}
		o.uid, o.generation = u.GetUID(), u.GetGeneration()
		o.status, _ = u.Object["status"].(map[string]any)
		desc := u.GetAnnotations()[rules.DescriptionAnnotation]
		if o.rule == nil && o.parseErr == nil || o.parsedGen != o.generation || o.parsedDesc != desc {
			o.rule, o.parseErr = rules.ParseObject(u.Object)
			if o.parseErr == nil {
				errs := append(r.opts.Limits.Check(o.rule), admission.TenantCheck(o.rule, r.opts.Limits)...)
				if len(errs) > 0 {
					o.rule, o.parseErr = nil, errs
				}
			}
			o.parsedGen, o.parsedDesc = o.generation, desc
		}
		o.problems = nil
		if o.parseErr != nil {
			o.problems.AddError(diag.Position{File: src}, o.parseErr)
			failed = append(failed, src) // its last good version keeps running
			continue
		}
		good = append(good, o.rule)
	}
	for src := range r.objects {
		if !seen[src] {
			delete(r.objects, src) // deleted: its rule stops with this load
		}
	}
	err := r.opts.Loader.Load(ctx, good, failed...)
	if ctx.Err() != nil {
		return
	}
	byRule := map[string]*object{}
	for _, o := range r.objects {
		byRule[o.ref.RuleName()] = o
	}
	var unplaced []error
	for _, p := range diag.Problems(err) {
		var e *diag.Error
		if !errors.As(p, &e) {
			unplaced = append(unplaced, p)
			continue
		}
		o := byRule[e.Pos.Rule]
		if o == nil {
			o = r.objects[sourceOf(e.Pos.File)]
		}
		if o == nil {
			unplaced = append(unplaced, p)
			continue
		}
		o.problems = append(o.problems, e)
	}
	running, broken := 0, 0
	for _, o := range r.objects {
		if o.parseErr == nil && !hasErrors(o.problems) {
			o.running = o.generation
		}
		if hasErrors(o.problems) {
			broken++
		}
		if o.running != 0 {
			running++
		}
		if o.generation != o.loggedGen {
			o.loggedGen = o.generation
			switch {
			case !r.opts.Admission:
				diag.Log(r.log, "rule object with errors: the version before it keeps running, if any", errorsOf(o.problems))
			case o.parseErr == nil:
				// The engine's runner logs the object's own problems.
				diag.Log(r.log, "admission: rule object not served", errorsOf(o.problems))
			}
		}
	}
	if r.opts.Admission {
		diag.Log(r.log, "admission: rule objects not served", errors.Join(unplaced...))
		return
	}
	diag.Log(r.log, "rule objects: problems that name no object", errors.Join(unplaced...))
	r.log.Info("rule objects loaded", "objects", len(r.objects), "running", running, "withErrors", broken)
}

// sourceOf is the Source of a rule object that a position's file names:
// the Source itself, or the Source and the field (rule/NS/NAME: spec.script).
func sourceOf(file string) string {
	src, _, _ := strings.Cut(file, ": ")
	return src
}

func hasErrors(l diag.ErrorList) bool {
	for _, e := range l {
		if !e.Warning {
			return true
		}
	}
	return false
}

func errorsOf(l diag.ErrorList) error {
	if len(l) == 0 {
		return nil
	}
	return l
}
