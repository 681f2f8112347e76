package delivery

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// TraceSize bounds the trace a Core keeps (see the package doc,
// Trace). The zero value keeps none.
type TraceSize struct {
	// Objects is how many objects have a trace; the object seen first
	// gives its place to a new one when they are all taken.
	Objects int
	// Records is how many records each object keeps, the latest.
	Records int
}

// DefaultTraceSize is the trace of `kreact run --explain-address` and of
// `kreact test`: about 256 × 16 × 136 B ≈ 0.56 MB per rule when full, plus
// the text of the records that have some (errors, ignored paths, action
// targets).
var DefaultTraceSize = TraceSize{Objects: 256, Records: 16}

// RecordKind is what a Record is about.
type RecordKind string

// The kinds of records.
const (
	// RecordChange is a change an informer reported, and what became of
	// it (Record.Result: a Decision).
	RecordChange RecordKind = "change"
	// RecordCall is a handler call.
	RecordCall RecordKind = "call"
	// RecordAction is an action of a call that succeeded.
	RecordAction RecordKind = "action"
)

// The results of a change record: what the Core decided.
const (
	// Queued: a call waits for the change.
	Queued = "queued"
	// Coalesced: merged into the call that already waited (spec.delivery
	// latest).
	Coalesced = "coalesced"
	// NotHandled: the rule calls no handler for this kind of change
	// (spec.events, or the script declares no handler).
	NotHandled = "not handled"
	// Ignored: an update whose every change is at or under an ignored
	// path (spec.ignoreChanges, metadata.resourceVersion,
	// metadata.managedFields).
	Ignored = "ignored"
	// Cancelled: an add deleted before its call; the script never saw
	// the object.
	Cancelled = "cancelled"
	// Dropped: a full queue (delivery every), or a change of an object
	// whose finalization is done.
	Dropped = "dropped"
	// Seen: a call already had this state, read from the cache.
	Seen = "seen"
)

// Record is one entry of an object's trace.
type Record struct {
	// At is when it happened, on the Core's clock (the test's clock
	// under kreact test).
	At time.Time `json:"at"`
	// Kind is what the record is about.
	Kind RecordKind `json:"kind"`
	// Event is the change's type, or the handler's event for a call.
	Event event.Type `json:"event,omitempty"`
	// Result is a change's decision (Queued, Ignored…), a call's outcome
	// ("ok", "failed, retried", "given up"…) or an action's ("ok",
	// "failed", "dry-run").
	Result string `json:"result"`
	// Detail says why, or the error.
	Detail string `json:"detail,omitempty"`
	// Duration is how long a call or an action took.
	Duration time.Duration `json:"duration,omitempty"`
	// Retry is, for a call, how many times it had been retried.
	Retry int `json:"retry,omitempty"`
	// Verb and Target are an action's.
	Verb   actions.Verb `json:"verb,omitempty"`
	Target string       `json:"target,omitempty"`
}

// ObjectTrace is what a Core knows of one object, as one informer of
// its plan sees it.
type ObjectTrace struct {
	// Source is the index of the informer in the rule's plan.
	Source int `json:"source"`
	// Resource is the object's resource.
	Resource schema.GroupResource `json:"resource"`
	// Namespace and Name are the object's.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Records are the latest records, oldest first (by At; records of
	// the same time in the order they were made).
	Records []Record `json:"records,omitempty"`
	// Pending says what waits for the object: a call, a timer, the
	// rule's finalizer.
	Pending []string `json:"pending,omitempty"`
}

// trace keeps the latest records of the latest objects of one rule. Its
// storage is allocated once per place: a full trace reuses the place of
// the object seen first, records included, so that tracing allocates
// nothing per change but the text of the records that have some.
type trace struct {
	mu      sync.Mutex
	records int
	places  []tracePlace
	next    int // with every place taken, the one to reuse next
	index   map[objectKey]int
}

type tracePlace struct {
	key      objectKey
	resource schema.GroupResource
	ring     []Record
	n        int // records written
}

func newTrace(size TraceSize) *trace {
	if size.Objects <= 0 || size.Records <= 0 {
		return nil
	}
	return &trace{records: size.Records, places: make([]tracePlace, 0, size.Objects), index: make(map[objectKey]int, size.Objects)}
}

// add records r for key. Safe for concurrent use.
func (t *trace) add(key objectKey, gr schema.GroupResource, r Record) {
	t.mu.Lock()
	defer t.mu.Unlock()
	i, ok := t.index[key]
	if !ok {
		if len(t.places) < cap(t.places) {
			t.places = append(t.places, tracePlace{ring: make([]Record, t.records)})
			i = len(t.places) - 1
		} else {
			i = t.next
			t.next = (t.next + 1) % len(t.places)
			delete(t.index, t.places[i].key)
		}
		p := &t.places[i]
		p.key, p.resource, p.n = key, gr, 0
		clear(p.ring)
		t.index[key] = i
	}
	p := &t.places[i]
	if gr.Resource != "" {
		p.resource = gr
	}
	p.ring[p.n%len(p.ring)] = r
	p.n++
}

// find returns copies of the traces of an object, one per informer that
// saw it.
func (t *trace) find(gr schema.GroupResource, namespace, name string) []ObjectTrace {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []ObjectTrace
	for _, p := range t.places {
		if p.key.tick || p.key.namespace != namespace || p.key.name != name || p.resource != gr {
			continue
		}
		o := ObjectTrace{Source: p.key.source, Resource: p.resource, Namespace: namespace, Name: name}
		first := max(0, p.n-len(p.ring))
		for n := first; n < p.n; n++ {
			o.Records = append(o.Records, p.ring[n%len(p.ring)])
		}
		// A call is recorded once it is settled, at the time it started:
		// what happened meanwhile (a change that arrived, the delete that
		// follows a finalizer's removal) was recorded before it.
		slices.SortStableFunc(o.Records, func(a, b Record) int { return a.At.Compare(b.At) })
		out = append(out, o)
	}
	return out
}

// Trace returns what the Core knows of an object of resource gr:
// one ObjectTrace per informer of the rule's plan that holds records of
// it or work for it, in the order of the plan; none when the rule has
// not seen the object lately, or keeps no trace (Options.Trace) and has
// no work waiting for it. Safe for concurrent use with everything else.
func (d *Core) Trace(gr schema.GroupResource, namespace, name string) []ObjectTrace {
	var out []ObjectTrace
	if d.trace != nil {
		out = d.trace.find(gr, namespace, name)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.now()
	for source, res := range d.sources {
		if res != gr {
			continue
		}
		key := objectKey{source: source, namespace: namespace, name: name}
		e := d.pending[key]
		since, waiting := d.fin.since(key)
		if e == nil && !waiting {
			continue
		}
		i := slices.IndexFunc(out, func(o ObjectTrace) bool { return o.Source == source })
		if i < 0 {
			out = append(out, ObjectTrace{Source: source, Resource: gr, Namespace: namespace, Name: name})
			i = len(out) - 1
		}
		if e != nil {
			out[i].Pending = append(out[i].Pending, e.describe(now)...)
		}
		if waiting {
			out[i].Pending = append(out[i].Pending, fmt.Sprintf("deleted %s ago; holds the finalizer %s until onDelete succeeds", now.Sub(since).Round(time.Millisecond), d.fin.name))
		}
	}
	slices.SortFunc(out, func(a, b ObjectTrace) int { return a.Source - b.Source })
	return out
}

// describe says what waits in the entry, for Trace.
func (e *entry) describe(now time.Time) []string {
	var out []string
	if e.owedDelete != nil {
		out = append(out, "onDelete")
	}
	if e.finalize != nil {
		out = append(out, "onDelete, then the finalizer's removal")
	}
	switch e.kind {
	case event.Add:
		out = append(out, "onAdd")
	case event.Update:
		out = append(out, "onUpdate")
	}
	if n := len(e.every); n > 0 {
		out = append(out, fmt.Sprintf("%d changes (delivery every)", n))
	}
	switch {
	case e.timer.owed:
		out = append(out, "onTimer, to be retried")
	case !e.timer.at.IsZero():
		out = append(out, fmt.Sprintf("onTimer at %s (in %s)", e.timer.at.UTC().Format(time.RFC3339), e.timer.at.Sub(now).Round(time.Millisecond)))
	}
	return out
}

// traced reports whether the Core keeps a trace; the hooks below are
// called only then, so that a Core without one pays a nil check.
func (d *Core) traced() bool { return d.trace != nil }

// traceChange records the decision about change c of key.
func (d *Core) traceChange(key objectKey, c Change, result, detail string) {
	d.trace.add(key, c.Resource.GVR.GroupResource(), Record{At: d.now(), Kind: RecordChange, Event: c.Type, Result: result, Detail: detail})
}

// traceObserved records what Observe did with change c of key, which
// entry e holds now; had is whether a call waited for it already.
func (d *Core) traceObserved(key objectKey, c Change, had bool, e *entry) {
	switch {
	case c.Finalize:
		d.traceChange(key, c, Queued, "deleted; held by the finalizer "+d.fin.name)
	case !d.want.has(c.Type) && c.Type == event.Delete && had && !e.hasChange():
		d.traceChange(key, c, Cancelled, "the object was deleted before its call; the script never saw it")
	case !d.want.has(c.Type):
		d.traceChange(key, c, NotHandled, d.unhandled[c.Type])
	case c.Type == event.Delete && !d.every && !e.hasChange():
		d.traceChange(key, c, Cancelled, "the object was deleted before its call; the script never saw it")
	case had && !d.every:
		d.traceChange(key, c, Coalesced, "merged into the call that waited")
	default:
		d.traceChange(key, c, Queued, "")
	}
}

// unhandledWhy says, for each kind of change, why the rule calls no
// handler for it ("" when it does).
func unhandledWhy(rule *rules.Rule, h Handlers) map[event.Type]string {
	out := map[event.Type]string{}
	for _, t := range rules.AllEvents() {
		switch {
		case !rule.Handles(t):
			var events []string
			for _, e := range rule.Events {
				events = append(events, string(e))
			}
			out[t] = fmt.Sprintf("spec.events (%s) lists %s, not %s", rule.EventsPos, strings.Join(events, ", "), t)
			if !rule.EventsPos.IsValid() {
				out[t] = fmt.Sprintf("spec.events lists %s, not %s", strings.Join(events, ", "), t)
			}
		case !h.HasHandler(t):
			out[t] = "the script declares no " + t.Handler()
		}
	}
	return out
}

// traceIgnored records an update of key from seen to latest that changes
// only ignored paths, naming the paths and the entries that ignore them.
func (d *Core) traceIgnored(key objectKey, c Change) {
	if c.Old == nil || c.Object == nil {
		return
	}
	d.traceChange(key, c, Ignored, ignoredBy(d.rule, event.ChangedPaths(c.Old.Object, c.Object.Object, nil)))
}

// ignoredBy says which of the rule's ignored paths swallows each of
// changed.
func ignoredBy(rule *rules.Rule, changed []string) string {
	if len(changed) == 0 {
		return "only metadata.resourceVersion or metadata.managedFields changed, which are always ignored"
	}
	var parts []string
	for _, p := range changed {
		by := ""
		for i, ig := range rule.IgnoreChanges {
			s := ig.String()
			if p == s || strings.HasPrefix(p, s+".") || strings.HasPrefix(p, s+"[") {
				by = fmt.Sprintf("spec.ignoreChanges[%d] %s", i, s)
				if i < len(rule.IgnoreChangesPos) {
					by += " (" + rule.IgnoreChangesPos[i].String() + ")"
				}
				break
			}
		}
		if by == "" {
			by = "always ignored"
		}
		parts = append(parts, p+" by "+by)
	}
	return "changed only ignored paths: " + strings.Join(parts, "; ") + "; for onUpdate to see such a change, narrow or remove that entry"
}

// traceCall records a call of key, made with ev, that took dur and
// ended with err; result says what became of it.
func (d *Core) traceCall(key objectKey, ev event.Event, at time.Time, dur time.Duration, retry int, err error, result string) {
	r := Record{At: at, Kind: RecordCall, Event: ev.Type, Result: result, Duration: dur, Retry: retry}
	if err != nil {
		r.Detail = err.Error()
		var se *event.ScriptError
		if errors.As(err, &se) && se.Position.IsValid() {
			r.Detail = se.Position.String() + ": " + se.Message
		}
		if rest := RestAfter(err); rest >= restLogged {
			r.Detail += fmt.Sprintf(" (the worker rests %s)", rest.Round(time.Millisecond))
		}
	}
	d.trace.add(key, ev.Resource.GVR.GroupResource(), r)
}

// traceAction returns the function that records how action a of key,
// handed to the sink at start, ended.
func (d *Core) traceAction(key objectKey, gr schema.GroupResource, a actions.Action, start time.Time) func(error) {
	return func(err error) {
		r := Record{At: d.now(), Kind: RecordAction, Result: "ok", Duration: d.clock.Since(start), Verb: a.Verb, Target: actionTarget(a)}
		switch {
		case err != nil:
			r.Result, r.Detail = "failed", err.Error()
		case a.DryRun:
			r.Result = "dry-run"
		}
		d.trace.add(key, gr, r)
	}
}

// actionTarget names what action a is about.
func actionTarget(a actions.Action) string {
	if a.Request != nil {
		return a.Request.Method + " " + a.Request.URL
	}
	t := a.Resource.GroupResource().String()
	if a.Namespace != "" {
		t += " " + a.Namespace + "/" + a.Name
	} else {
		t += " " + a.Name
	}
	if a.Subresource != "" {
		t += " (" + a.Subresource + ")"
	}
	return t
}
