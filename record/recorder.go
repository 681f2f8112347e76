package record

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/projection"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/ruletest"
)

// Options configure a Recorder. The zero value records every object of
// the resources watched, in all namespaces, on the real clock.
type Options struct {
	// Names, if set, are the only objects recorded, by name.
	Names []string
	// Namespace limits namespaced resources to one namespace; empty means
	// all.
	Namespace string
	// LabelSelector is sent to the API server.
	LabelSelector string
	// Now is the clock of the changes. Nil means time.Now.
	Now func() time.Time
}

// Recorder records the changes of chosen objects and the actions rules
// asked for. Its handlers and Asked may be called from any goroutine.
type Recorder struct {
	opts Options
	// withRule names the rule of each action, as kreact test --update
	// does when a test runs several rules.
	withRule bool
	// dryRun are the rules whose own spec.dryRun marks their actions.
	dryRun map[string]bool

	selector labels.Selector

	mu       sync.Mutex
	recorded map[schema.GroupVersionResource]apiresource.Resource
	start    time.Time
	changes  []Change
	actions  []ruletest.Fields
	givenUp  []string
	// current holds the last recorded state of each object, to leave out
	// updates that changed only what Trim removes.
	current map[objectKey]*unstructured.Unstructured
	watches []*dynamicinformer.Watch
}

type objectKey struct{ apiVersion, kind, namespace, name string }

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName()}
}

// New returns a Recorder of the actions of rs.
func New(rs []*rules.Rule, opts Options) (*Recorder, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	sel, err := labels.Parse(opts.LabelSelector)
	if err != nil {
		return nil, fmt.Errorf("label selector %q: %w", opts.LabelSelector, err)
	}
	r := &Recorder{opts: opts, withRule: len(rs) > 1, dryRun: map[string]bool{}, selector: sel,
		recorded: map[schema.GroupVersionResource]apiresource.Resource{}, current: map[objectKey]*unstructured.Unstructured{}}
	for _, rule := range rs {
		r.dryRun[rule.Name] = rule.DryRun
	}
	return r, nil
}

// Watch starts recording the objects of res through informers.
func (r *Recorder) Watch(informers dynamicinformer.Watcher, res apiresource.Resource) error {
	ns := r.opts.Namespace
	if !res.Namespaced {
		ns = ""
	}
	key := dynamicinformer.Key{GVR: res.GVR, Namespace: ns, LabelSelector: r.opts.LabelSelector}
	w, err := informers.WatchFields(key, "kreact-record", r.handler(), projection.Fields{})
	if err != nil {
		return fmt.Errorf("watch %s: %w", res.GVR.GroupResource(), err)
	}
	r.mu.Lock()
	r.watches = append(r.watches, w)
	r.recorded[res.GVR] = res
	r.mu.Unlock()
	return nil
}

// Scope returns informers as the rules must see them for the recording
// to replay: a change of an object of a recorded resource that the
// recording leaves out (another namespace, label or name) does not reach
// them, and one that enters or leaves the recording is an add or a
// delete, as the recorder's watch sees it. Call Watch first.
func (r *Recorder) Scope(informers dynamicinformer.Watcher) dynamicinformer.Watcher {
	return scoped{informers, r, false}
}

// ScopeAll returns informers as Scope does, for every resource, recorded
// or not: kreact preview's -n and -l, which narrow what the rules are
// handed whatever they watch.
func (r *Recorder) ScopeAll(informers dynamicinformer.Watcher) dynamicinformer.Watcher {
	return scoped{informers, r, true}
}

type scoped struct {
	dynamicinformer.Watcher
	r *Recorder
	// all filters every resource, not only the recorded ones.
	all bool
}

func (s scoped) WatchFields(key dynamicinformer.Key, owner string, h cache.ResourceEventHandler, fields projection.Fields) (*dynamicinformer.Watch, error) {
	s.r.mu.Lock()
	res, ok := s.r.recorded[key.GVR]
	s.r.mu.Unlock()
	if !ok && s.all {
		// An object of a namespaced resource always has a namespace: in
		// needs no discovery to leave cluster-scoped ones unfiltered.
		res, ok = apiresource.Resource{GVR: key.GVR, Namespaced: true}, true
	}
	if ok {
		h = s.r.filter(res, h)
	}
	return s.Watcher.WatchFields(key, owner, h, fields)
}

// in reports whether the recording holds obj, an object of res.
func (r *Recorder) in(res apiresource.Resource, obj any) bool {
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return false
	}
	return (r.opts.Namespace == "" || !res.Namespaced || u.GetNamespace() == "" || u.GetNamespace() == r.opts.Namespace) &&
		r.selector.Matches(labels.Set(u.GetLabels())) &&
		(len(r.opts.Names) == 0 || slices.Contains(r.opts.Names, u.GetName()))
}

// filter passes h the changes of the objects the recording holds.
func (r *Recorder) filter(res apiresource.Resource, h cache.ResourceEventHandler) cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if r.in(res, obj) {
				h.OnAdd(obj, initial)
			}
		},
		UpdateFunc: func(old, obj any) {
			switch wasIn, isIn := r.in(res, old), r.in(res, obj); {
			case wasIn && isIn:
				h.OnUpdate(old, obj)
			case isIn:
				h.OnAdd(obj, false)
			case wasIn:
				h.OnDelete(obj)
			}
		},
		DeleteFunc: func(obj any) {
			if r.in(res, obj) {
				h.OnDelete(obj)
			}
		},
	}
}

// Synced reports whether every watch has listed its objects.
func (r *Recorder) Synced() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches {
		if !w.HasSynced() {
			return false
		}
	}
	return true
}

// Objects returns how many recorded objects exist now.
func (r *Recorder) Objects() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.current)
}

// Stop stops the watches.
func (r *Recorder) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range r.watches {
		w.Stop()
	}
	r.watches = nil
}

// Begin marks when the rules start: the case's spec.now.
func (r *Recorder) Begin() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.start = r.opts.Now()
}

// Asked records an action a rule asked for; it is an
// engine.Options.Asked.
func (r *Recorder) Asked(a actions.Action) {
	if !r.dryRun[a.Rule] {
		a.DryRun = false
	}
	fs := ruletest.ActionFields(a, r.withRule)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.actions = append(r.actions, fs)
}

var _ engine.Observer = (*Recorder)(nil)

// HandlerGivenUp records the error of a call given up, as kreact test
// expects it; the Recorder is the engine's Observer.
func (r *Recorder) HandlerGivenUp(_ string, _ event.Type, err error) {
	msg := err.Error()
	var se *event.ScriptError
	if errors.As(err, &se) {
		// kreact test's error names the rule file as the case does.
		se := *se
		se.Position = diag.Position{}
		msg = se.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.givenUp = append(r.givenUp, msg)
}

// Event, HandlerCall, ChangesDropped and ActionResult record nothing: the
// changes come from the recorder's own watches, the actions from Asked.
func (r *Recorder) Event(string, string, event.Type)                     {}
func (r *Recorder) HandlerCall(string, event.Type, time.Duration, error) {}
func (r *Recorder) ChangesDropped(string, int)                           {}
func (r *Recorder) ActionResult(actions.Result)                          {}

// Recording returns what was recorded until now.
func (r *Recorder) Recording() Recording {
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	start := r.start
	if start.IsZero() {
		start = now
	}
	return Recording{Start: start, End: now, Changes: slices.Clone(r.changes), Actions: slices.Clone(r.actions), Errors: slices.Clone(r.givenUp)}
}

func (r *Recorder) handler() cache.ResourceEventHandler {
	return cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    func(obj any, initial bool) { r.observe(event.Add, obj, initial) },
		UpdateFunc: func(_, obj any) { r.observe(event.Update, obj, false) },
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			r.observe(event.Delete, obj, false)
		},
	}
}

func (r *Recorder) observe(t event.Type, obj any, initial bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || (len(r.opts.Names) > 0 && !slices.Contains(r.opts.Names, u.GetName())) {
		return
	}
	at := r.opts.Now()
	trimmed := Trim(u)
	k := keyOf(trimmed)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.current[k]; ok && t == event.Add && initial {
		// The informer listed again (a rule's watch widened its fields,
		// or the resource came back): for the recording, an update.
		t, initial = event.Update, false
	}
	switch t {
	case event.Update:
		if prev, ok := r.current[k]; ok && reflect.DeepEqual(prev.Object, trimmed.Object) {
			return
		}
		r.current[k] = trimmed
	case event.Add:
		r.current[k] = trimmed
	case event.Delete:
		delete(r.current, k)
	}
	r.changes = append(r.changes, Change{Type: t, Initial: initial, Object: trimmed, At: at})
}
