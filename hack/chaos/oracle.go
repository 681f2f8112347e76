package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// The oracle: one function per guarantee of docs/delivery.md and
// docs/rules.md, each quoting the sentence it checks. It reads only the
// History (what the checker wrote, the probes' lines, the faults, the
// final state), never kreact's code, so that it can be compared with the
// docs line by line.
//
// Where the docs allow a repeat or a late call ("a retry after a timeout,
// a restart, two leaders overlapping for a moment", a shard move), the
// oracle allows it only within a fault window (Fault): from the fault to
// a grace period after its end.

// grace is how long after a fault the docs' allowances last with one
// replica: the new process's first list, a rule's restart. With --shards
// it is shardGrace: a stopped replica's objects move when its Lease
// (4s in a run) runs out, and the others notice within a renew period.
const (
	grace      = 2 * time.Second
	shardGrace = 15 * time.Second
)

// slack is how late a call may be without a fault: a watch event, the
// queue, a retry of an action.
const slack = 10 * time.Second

// switchTime bounds how long after an edit of p-sel2 its informer's
// restart may still merge changes: the reload's poll (300ms), the load,
// and the new informer's list, on a loaded machine.
const switchTime = 3 * time.Second

// Violation is a guarantee that the history breaks.
type Violation struct {
	Guarantee string
	Detail    string
}

func (v Violation) String() string { return v.Guarantee + ": " + v.Detail }

// guarantee is one documented promise and its check.
type guarantee struct {
	name string
	// doc is where the docs make the promise, and what they say.
	doc   string
	check func(h *History) []string
}

var guarantees = []guarantee{
	{"one onDelete per delete", `delivery.md, "Guaranteed deletes: finalizers": the API server keeps a deleted object "until kreact has called onDelete with it and every action of that call has succeeded"; "Idempotent scripts": a call repeats only on "a retry after a timeout, a restart, two leaders overlapping for a moment"`, onDeletePerDelete},
	{"every deleted object goes", `delivery.md, "Guaranteed deletes: finalizers": the API server keeps a deleted object "until kreact has called onDelete with it and every action of that call has succeeded; then kreact removes its finalizer, and the object goes"; an object the rule no longer selects "loses the finalizer when the rule starts"`, deletesGo},
	{"a finalizer follows its rule's selector", `delivery.md, "Guaranteed deletes: finalizers": kreact adds the finalizer "to every object the rule watches when it first sees it"; "An object that leaves the rule's selector or namespaces gets onDelete and loses the finalizer at once"; one whose labels leave the selector while kreact is away, or that an edit no longer selects, "gets no onDelete (no watch reports the move); it loses the finalizer when the rule starts"`, finalizersFollowSelectors},
	{"nothing follows onDelete", `delivery.md, "Coalesced per object": "…, delete → onDelete(last known state)"; "Timers": "Deleting the object drops its timer"`, nothingAfterDelete},
	{"every change reaches the rule", `delivery.md, "Coalesced per object": the waiting changes "are merged into one call with the latest state"; "What a restart replays": "every existing object as an initial add", and deleted objects held by the finalizer "get their onDelete"`, everyChangeReaches},
	{"delivery every calls once per change", `delivery.md, "Coalesced per object": "spec.delivery: every: one call per change"`, everyChangeOnce},
	{"onUpdate only for a change the rule sees", `rules.md, "Delivery": onUpdate lists "the paths where they differ, ignored paths left out; no call if that is none"; "Once per object": "Writing the marker calls no onUpdate"; delivery.md: kreact's own finalizer patch calls nothing`, updatesHaveACause},
	{"kreact.once is true once", `rules.md, "Once per object": "It returns true when the object does not carry the rule's marker"; "Guarantee: at least once. The window is between the call's last action succeeding and the marker being written"`, onceOnce},
	{"timers are not early and not lost", `delivery.md, "Timers": "kreact.after(obj, delay) arms one timer per object and rule: a later kreact.after of the object replaces it"; onTimer is called "once delay has passed"`, timersKeepTime},
	{"conditions follow the object", `script-api.md: kreact.setCondition sets "one condition in the target's status.conditions the Kubernetes way" (lastTransitionTime moves only when the status changes; observedGeneration is the generation the call saw); a rule that ignores status does not write for ever`, conditionsFollow},
	{"owned objects point at their owner", `script-api.md, kreact.create: "{owner: obj} makes obj its controller owner"; kreact.apply takes the same {owner}`, ownersPoint},
	{"actions stay within spec.permissions", `rules.md: "A call that throws, times out, asks for more than maxActions actions or for one its permissions refuse queues none"`, permissionsHold},
	{"a label selector selects as the API server would", `rules.md, spec.watch "labelSelector": "a rule's handlers are called for the objects its selector selects and no others, as if the API server had selected them"; "one that stops matching an onDelete with its last matching state"`, selectorSelects},
	{"entering a selector is an add, leaving it a delete", `rules.md, spec.watch "labelSelector": "An object whose labels change to match is an onAdd, one that stops matching an onDelete with its last matching state"; when a rule with another selector joins, "the rules already on it lose and repeat no event"`, selectorEntersAndLeaves},
	{"delivery every sees each move across a selector", `delivery.md, "Coalesced per object": "spec.delivery: every: one call per change", "…, delete → onDelete(last known state)"; rules.md, spec.watch "labelSelector": "An object whose labels change to match is an onAdd, one that stops matching an onDelete", and a hand-over loses "no event", but gives "what changed while it restarted" as "the difference: one call per object to its state then, even with delivery: every"`, selectorEveryMove},
	{"a selector's rule ends holding what it selects", `rules.md, spec.watch "labelSelector": "a rule's handlers are called for the objects its selector selects and no others"; delivery.md, "What a restart replays": "every existing object as an initial add", "Nothing is replayed for objects deleted while it was not running"; "API server outages": "the informer lists and delivers the difference: updates, adds, and the deletes that happened meanwhile"`, selectorFinalView},
	{"ctx.initial only for what was there when the rule started", `script-api.md, ctx: "initial: true for an add from the initial list (kreact started, the rule was edited, a leader took over, the rule moved process)"; rules.md, spec.watch "labelSelector": when a rule with another selector starts, "the rules already on it lose and repeat no event"`, initialOnlyAtStart},
	{"one tick at a time, and ticks go on", `delivery.md, "Periodic calls": "spec.every calls onTick(ctx) at that interval"; "With --shards, a tick runs once for the cluster"; rules.md, spec.tickScope: "While the replicas notice a change of members … a tick may run on two replicas or on none"`, ticksOnce},
}

// Check runs every guarantee over h.
func Check(h *History) []Violation {
	var out []Violation
	for _, g := range guarantees {
		for _, d := range g.check(h) {
			out = append(out, Violation{Guarantee: g.name, Detail: d})
		}
	}
	return out
}

// onDeletePerDelete: each delete of a ConfigMap held by a finalizer
// probe's finalizer gets that probe's onDelete; more than once only
// within a fault window. p-fin watches every ConfigMap, so every delete
// it held is owed. p-sel2 owes the delete of what it held only when its
// selector still selected the object until the call was due (owes): an
// object that its labels or an edit took out of the selector is let go
// without one (finalizersFollowSelectors checks that); its onDelete of a
// delete is the one with the deletionTimestamp, not that of a move out
// of the selector before it.
func onDeletePerDelete(h *History) []string {
	var out []string
	for _, w := range h.Writes {
		if w.Kind != Delete || w.Resource != "configmaps" {
			continue
		}
		for _, rule := range finalizerProbes {
			var calls []Call
			for _, c := range h.calls(rule, w.UID, "onDelete") {
				if rule == "p-fin" || c.Deleting {
					calls = append(calls, c)
				}
			}
			switch {
			case len(calls) == 0 && h.owes(rule, w):
				out = append(out, fmt.Sprintf("%s: %s (uid %s) was deleted at %s holding the finalizer; onDelete was never called", rule, w.Name, w.UID, h.at(w.At)))
			case len(calls) > 1 && !h.faultNear(rule, calls[0].At.Add(-time.Second), calls[len(calls)-1].At):
				out = append(out, fmt.Sprintf("%s: %s (uid %s): onDelete called %d times (%s) for one delete, with no fault near", rule, w.Name, w.UID, len(calls), h.times(calls)))
			}
		}
	}
	return out
}

// deletesGo: once kreact has settled, no object the checker deleted is
// still there, and nothing is stuck in deletion; for each one that is,
// what holds it.
func deletesGo(h *History) []string {
	var out []string
	for _, o := range h.Final.ConfigMaps {
		i := slices.IndexFunc(h.Writes, func(w Write) bool { return w.Kind == Delete && w.UID == o.UID })
		switch {
		case i >= 0:
			out = append(out, fmt.Sprintf("%s (uid %s, l=%s) was deleted at %s and is still there after kreact settled, held by the finalizers %v",
				o.Name, o.UID, o.Labels["l"], h.at(h.Writes[i].At), o.Finalizers))
		case o.Terminating:
			out = append(out, fmt.Sprintf("%s (uid %s, l=%s) is still held (finalizers %v) after kreact settled", o.Name, o.UID, o.Labels["l"], o.Finalizers))
		}
	}
	return out
}

// finalizersFollowSelectors: once kreact has settled, every live
// ConfigMap carries the finalizer of each finalizer probe whose running
// revision selects it (added "when it first sees it"), and no other
// probe's: an object that left p-sel2's selector, by a relabel or an
// edit, while the rule ran or while it was away, has lost it by the
// rule's next start at the latest. And an object that p-sel2 held but
// no longer selected when it was deleted (a relabel while kreact was
// away, or an edit, before the delete reached the rule) is let go
// without onDelete: "no watch reports the move".
func finalizersFollowSelectors(h *History) []string {
	var out []string
	for _, o := range h.Final.ConfigMaps {
		if o.Terminating {
			continue
		}
		for _, rule := range finalizerProbes {
			rev := h.revAt(rule, h.End)
			sel := selectorOf(rule, rev)
			want := sel == nil || slices.Contains(sel, o.Labels["l"])
			if has := slices.Contains(o.Finalizers, "kreact.dev/"+rule); has != want {
				what := "carries its finalizer, but its selector l in (%s) does not select it"
				if want {
					what = "is selected by l in (%s), but does not carry its finalizer"
				}
				if sel == nil {
					what = "watches it%s, but it does not carry its finalizer"
				}
				out = append(out, fmt.Sprintf("%s (revision %d): ConfigMap %s (uid %s, l=%s, finalizers %v) "+what,
					rule, rev, o.Name, o.UID, o.Labels["l"], o.Finalizers, strings.Join(sel, ",")))
			}
		}
	}
	for _, w := range h.Writes {
		if w.Kind != Delete || !slices.Contains(w.Held, "p-sel2") {
			continue
		}
		for _, c := range h.calls("p-sel2", w.UID, "onDelete") {
			if c.Deleting && !h.selectedSome("p-sel2", w.UID, w.At, c.At) {
				out = append(out, fmt.Sprintf("p-sel2: onDelete(%s) at %s (uid %s, l=%s) of a delete at %s, when no revision of the rule from the delete to the call selected the object: it is let go without onDelete",
					c.Name, h.at(c.At), c.UID, c.L, h.at(w.At)))
			}
		}
	}
	return out
}

// revAt is the revision of rule's file at t: the edits of it before.
func (h *History) revAt(rule string, t time.Time) int {
	n := 0
	for _, f := range h.Faults {
		if f.Kind == Edit && f.Rule == rule && !f.From.After(t) {
			n++
		}
	}
	return n
}

// selection is what may have decided whether rule selects uid from
// to to: the labels the checker gave it (the one it had at from, and
// those set after it up to to) and the revisions of the rule (the one
// at from, switchTime earlier, as a reload takes that long, and those
// edited in up to to).
func (h *History) selection(rule, uid string, from, to time.Time) (labels []string, revs []int) {
	labels = []string{h.labelBy(uid, from)}
	for _, w := range h.Writes {
		if w.UID == uid && w.Kind == SetLabel && w.At.After(from) && !w.At.After(to) {
			labels = append(labels, w.Value)
		}
	}
	for r := h.revAt(rule, from.Add(-switchTime)); r <= h.revAt(rule, to); r++ {
		revs = append(revs, r)
	}
	return labels, revs
}

// owes reports whether finalizer probe rule owes an onDelete for delete
// w: it held the object, and (for a probe with a selector) every label
// the object had and every revision of the rule, from the delete until
// the call was due, select it.
func (h *History) owes(rule string, w Write) bool {
	if !slices.Contains(w.Held, rule) {
		return false
	}
	labels, revs := h.selection(rule, w.UID, w.At, h.due(rule, w.At))
	for _, r := range revs {
		sel := selectorOf(rule, r)
		for _, l := range labels {
			if sel != nil && !slices.Contains(sel, l) {
				return false
			}
		}
	}
	return true
}

// selectedSome reports whether some label uid had and some revision of
// rule from to to select it.
func (h *History) selectedSome(rule, uid string, from, to time.Time) bool {
	labels, revs := h.selection(rule, uid, from, to)
	for _, r := range revs {
		sel := selectorOf(rule, r)
		for _, l := range labels {
			if sel == nil || slices.Contains(sel, l) {
				return true
			}
		}
	}
	return false
}

// due is when a change at t has reached rule at the latest: slack after
// it, and after each fault touching the rule that overlaps that span,
// its end, the grace period and slack again.
func (h *History) due(rule string, t time.Time) time.Time {
	g := grace
	if h.Shards {
		g = shardGrace
	}
	d := t.Add(slack)
	for moved := true; moved; {
		moved = false
		for _, f := range h.Faults {
			if (f.Rule == "" || f.Rule == rule) && !f.From.After(d) && !f.To.Add(g).Before(t) && f.To.Add(g+slack).After(d) {
				d, moved = f.To.Add(g+slack), true
			}
		}
	}
	return d
}

// nothingAfterDelete: in one process, no call of a rule about an object
// follows that rule's onDelete of it, but another onDelete; for a rule
// with a label selector, the onDelete of an object that left it is
// followed by the onAdd of its coming back (selectorEntersAndLeaves
// checks those).
func nothingAfterDelete(h *History) []string {
	var out []string
	deleted := map[[3]string]Call{} // proc, rule, uid
	for _, c := range h.Calls {
		k := [3]string{fmt.Sprint(c.Proc), c.Rule, c.UID}
		if c.Handler == "onDelete" {
			deleted[k] = c
			continue
		}
		if c.Sel != "" && c.Handler == "onAdd" {
			delete(deleted, k)
		}
		if d, ok := deleted[k]; ok && c.UID != "" {
			out = append(out, fmt.Sprintf("%s: %s(%s, uid %s) at %s follows onDelete at %s in the same process", c.Rule, c.Handler, c.Name, c.UID, h.at(c.At), h.at(d.At)))
		}
	}
	return out
}

// relevant reports whether rule looks at what write w changed: the
// paths it watches (spec.watch[].fields) minus spec.ignoreChanges.
func relevant(rule string, w Write) bool {
	switch rule {
	case "p-fin":
		return w.Resource == "configmaps" && w.Path != "metadata.annotations"
	case "p-every":
		// Its fields, and the identity it keeps (annotations included).
		return w.Resource == "configmaps"
	case "p-perm":
		return w.Resource == "configmaps" && (w.Path == "data" || w.Path == "metadata.labels" || w.Kind == Create)
	case "p-cond":
		return (w.Resource == "widgets" || w.Resource == "gadgets") && w.Path != "status"
	}
	return false
}

// everyChangeReaches: each change a rule looks at reaches it, in a call
// that sees that state or a newer one. Deleted objects are exempt, but
// for the changes the finalizer's rule (p-fin) owes: those made before
// the delete of an object it held reach its onDelete ("onDelete(last
// known state)"); a change of an object that is being deleted may come
// after that call, and calls nothing.
func everyChangeReaches(h *History) []string {
	var out []string
	for _, rule := range []string{"p-fin", "p-every", "p-cond"} {
		for i, w := range h.Writes {
			if w.Kind == Delete || !relevant(rule, w) {
				continue
			}
			del, after := h.deleteAfter(i)
			if (after && !(rule == "p-fin" && slices.Contains(del.Held, "p-fin"))) || h.deletedBefore(w.UID, w.At) {
				continue
			}
			if !slices.ContainsFunc(h.Calls, func(c Call) bool { return c.Rule == rule && c.UID == w.UID && c.RV >= w.RV }) {
				out = append(out, fmt.Sprintf("%s: %s %s/%s=%s at %s (uid %s, resourceVersion %d) reached no call (the last call saw %d)",
					rule, w.Kind, w.Resource, w.Name, w.Value, h.at(w.At), w.UID, w.RV, h.lastRV(rule, w.UID)))
			}
		}
	}
	return out
}

// everyChangeOnce: with delivery every (p-every), each change it looks at
// is a call of its own that sees exactly that state, when no fault was
// near (a restart lists the latest state only).
func everyChangeOnce(h *History) []string {
	var out []string
	for _, w := range h.Writes {
		if w.Kind == Delete || !relevant("p-every", w) || h.faultNear("p-every", w.At.Add(-2*time.Second), w.At.Add(slack)) || w.At.Add(slack).After(h.OpsEnd) {
			continue
		}
		n := 0
		for _, c := range h.calls("p-every", w.UID, "") {
			// onDelete gets the last known state again.
			if c.RV != w.RV || c.Handler == "onDelete" {
				continue
			}
			// delivery.md: at start every existing object is an initial
			// onAdd, so a process started after the write gives its state
			// again however long after the write the kill came. That call
			// is the start's, not a second one for the change. No fault
			// was near the write, so the process running then must still
			// have made the change's own call.
			if c.Initial && h.Procs[c.Proc].Start.After(w.At) {
				continue
			}
			n++
		}
		if n != 1 {
			out = append(out, fmt.Sprintf("%s %s/%s at %s (resourceVersion %d): %d calls saw it, want 1", w.Kind, w.Resource, w.Name, h.at(w.At), w.RV, n))
		}
	}
	return out
}

// updatesHaveACause: every onUpdate(old, new) of a rule that keeps whole
// objects follows a change the checker made between old and new, to a path
// the rule looks at, or a change of another rule's finalizer (p-sel2's,
// which p-fin sees come and go): kreact's own writes for the rule (its
// finalizer, its once markers, conditions under an ignored status) call
// nothing. A rule
// with spec.watch[].fields also sees the changes other rules make to the
// identity it keeps, so its onUpdate is checked by ctx.changed instead:
// some path it keeps changed.
func updatesHaveACause(h *History) []string {
	var out []string
	for _, c := range h.Calls {
		if c.Handler != "onUpdate" {
			continue
		}
		if c.Sel != "" {
			// A selector probe sees every rule's writes to the whole
			// object (p-fin's finalizer and once marker among them):
			// only some path must have changed.
			if strings.TrimSpace(c.Changed) == "" {
				out = append(out, fmt.Sprintf("%s: onUpdate(%s) at %s (resourceVersion %d → %d) with no path changed", c.Rule, c.Name, h.at(c.At), c.OldRV, c.RV))
			}
			continue
		}
		if kept, ok := projections[c.Rule]; ok {
			if !slices.ContainsFunc(strings.Fields(c.Changed), func(p string) bool { return slices.ContainsFunc(kept, func(k string) bool { return under(p, k) }) }) {
				out = append(out, fmt.Sprintf("%s: onUpdate(%s) at %s: changed %q, none of it kept by its fields", c.Rule, c.Name, h.at(c.At), c.Changed))
			}
			continue
		}
		if !slices.ContainsFunc(h.Writes, func(w Write) bool {
			return w.UID == c.UID && w.RV > c.OldRV && w.RV <= c.RV && relevant(c.Rule, w)
		}) && !othersFinalizersMoved(c) {
			out = append(out, fmt.Sprintf("%s: onUpdate(%s) at %s (resourceVersion %d → %d, changed %q) has no change of the checker's behind it",
				c.Rule, c.Name, h.at(c.At), c.OldRV, c.RV, c.Changed))
		}
	}
	return out
}

// othersFinalizersMoved reports whether the finalizers of other rules
// differ between the old and the new object of onUpdate c: another
// rule's finalizer, added or removed, is a change of metadata.finalizers
// like any other (rules.md, spec.ignoreChanges: an update is delivered
// "if it changes something outside all of these paths"); only the rule's
// own finalizer patch calls nothing.
func othersFinalizersMoved(c Call) bool {
	others := func(fin string) []string {
		var out []string
		for _, f := range strings.Split(fin, ",") {
			if f != "" && f != "kreact.dev/"+c.Rule {
				out = append(out, f)
			}
		}
		slices.Sort(out)
		return out
	}
	return !slices.Equal(others(c.Fin), others(c.OldFin))
}

// projections are the paths each rule with spec.watch[].fields keeps: its
// fields and, rules.md says, "The identity of an object is always kept:
// apiVersion, kind and metadata.name, namespace, uid, resourceVersion,
// labels, annotations, ownerReferences, deletionTimestamp and finalizers".
var projections = map[string][]string{
	"p-every": {"data", "metadata.labels", "metadata.annotations", "metadata.ownerReferences", "metadata.deletionTimestamp", "metadata.finalizers"},
}

// under reports whether path p is k or lies below it.
func under(p, k string) bool {
	return p == k || strings.HasPrefix(p, k+".") || strings.HasPrefix(p, k+"[")
}

// onceOnce: kreact.once is true for an object once, or again only within
// a fault window; every live object ends up marked.
func onceOnce(h *History) []string {
	var out []string
	byUID := map[string][]Call{}
	for _, c := range h.Calls {
		if c.Rule == "p-fin" && c.Once {
			byUID[c.UID] = append(byUID[c.UID], c)
		}
	}
	for uid, calls := range byUID {
		if len(calls) > 1 && !h.faultNear("p-fin", calls[0].At.Add(-time.Second), calls[len(calls)-1].At) {
			out = append(out, fmt.Sprintf("%s (uid %s): kreact.once true %d times (%s), with no fault near", calls[0].Name, uid, len(calls), h.times(calls)))
		}
	}
	for _, o := range h.Final.ConfigMaps {
		if _, ok := o.Annotations["once.kreact.dev/p-fin"]; !ok && !o.Terminating {
			out = append(out, fmt.Sprintf("%s (uid %s) never got p-fin's once marker", o.Name, o.UID))
		}
	}
	return out
}

// timersKeepTime: onTimer comes no earlier than the deadline of a timer
// armed before it, and the last timer armed in a process fires, unless
// the object was deleted, the process ended or a fault came first.
func timersKeepTime(h *History) []string {
	const early = 100 * time.Millisecond
	var out []string
	last := map[[2]string]Call{} // proc, uid → the last arm
	for _, c := range h.Calls {
		if c.Rule != "p-fin" {
			continue
		}
		k := [2]string{fmt.Sprint(c.Proc), c.UID}
		switch {
		case !c.Deadline.IsZero():
			last[k] = c
		case c.Handler == "onTimer":
			armed := slices.ContainsFunc(h.Calls, func(a Call) bool {
				return a.Proc == c.Proc && a.Rule == "p-fin" && a.UID == c.UID && !a.Deadline.IsZero() && a.At.Before(c.At) && !a.Deadline.After(c.At.Add(early))
			})
			if !armed {
				out = append(out, fmt.Sprintf("onTimer(%s) at %s is early: no timer armed before it was due", c.Name, h.at(c.At)))
			}
		}
	}
	for _, a := range last {
		due := a.Deadline.Add(slack)
		p := h.Procs[a.Proc]
		if due.After(h.End) || (!p.End.IsZero() && p.End.Before(due)) || h.deletedBefore(a.UID, due) || h.faultNear("p-fin", a.At, due) {
			continue
		}
		if !slices.ContainsFunc(h.Calls, func(c Call) bool {
			return c.Proc == a.Proc && c.Handler == "onTimer" && c.UID == a.UID && c.At.After(a.At)
		}) {
			out = append(out, fmt.Sprintf("the timer of %s armed at %s for %s never fired", a.Name, h.at(a.At), h.at(a.Deadline)))
		}
	}
	return out
}

// conditionsFollow: each live widget's and gadget's Ready condition says what its
// spec.ready says, for the generation it has; its lastTransitionTime is
// no older than the last change of spec.ready the rule saw; and the rule has stopped
// writing (the generation does not move once kreact has settled).
func conditionsFollow(h *History) []string {
	var out []string
	for _, o := range slices.Concat(h.Final.Widgets, h.Final.Gadgets) {
		if o.Terminating {
			continue
		}
		want := map[string]string{"true": "True"}[o.Ready]
		if want == "" {
			want = "False"
		}
		i := slices.IndexFunc(o.Conditions, func(c Condition) bool { return c.Type == "Ready" })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s %s has no Ready condition", o.Kind, o.Name))
			continue
		}
		c := o.Conditions[i]
		if c.Status != want || c.ObservedGeneration != o.Generation {
			out = append(out, fmt.Sprintf("%s %s: Ready=%s for generation %d, want %s for generation %d", o.Kind, o.Name, c.Status, c.ObservedGeneration, want, o.Generation))
		}
		if flip := h.lastFlip(o.UID); c.LastTransitionTime.Before(flip.Add(-time.Second)) {
			out = append(out, fmt.Sprintf("%s %s: lastTransitionTime %s is older than the change of spec.ready at %s", o.Kind, o.Name, h.at(c.LastTransitionTime), h.at(flip)))
		}
		if g, ok := h.Final.Generations[o.UID]; ok && g != o.Generation {
			out = append(out, fmt.Sprintf("%s %s: generation %d moved to %d after kreact settled: something keeps writing it", o.Kind, o.Name, o.Generation, g))
		}
	}
	return out
}

// ownersPoint: each live widget and gadget owns, as controller, the ConfigMap its
// rule applies, and that ConfigMap says what the widget's spec says.
func ownersPoint(h *History) []string {
	var out []string
	for _, o := range slices.Concat(h.Final.Widgets, h.Final.Gadgets) {
		if o.Terminating {
			continue
		}
		child := map[string]string{"Widget": "w-", "Gadget": "g-"}[o.Kind] + o.Name
		i := slices.IndexFunc(h.Final.Owned, func(c Object) bool { return c.Name == child })
		if i < 0 {
			out = append(out, fmt.Sprintf("%s %s has no ConfigMap %s", o.Kind, o.Name, child))
			continue
		}
		c := h.Final.Owned[i]
		if !slices.Contains(c.Owners, Owner{UID: o.UID, Controller: true}) {
			out = append(out, fmt.Sprintf("ConfigMap %s: owners %v, want the uid %s of %s %s as controller", child, c.Owners, o.UID, o.Kind, o.Name))
		}
		if ready := map[string]string{"true": "true"}[o.Ready]; c.Data["ready"] != ready && !(ready == "" && c.Data["ready"] == "false") {
			out = append(out, fmt.Sprintf("ConfigMap %s says ready=%s, the spec.ready of %s %s is %q", child, c.Data["ready"], o.Kind, o.Name, o.Ready))
		}
	}
	return out
}

// permissionsHold: p-perm never writes where its permissions refuse, and
// its allowed copies follow their sources.
func permissionsHold(h *History) []string {
	var out []string
	for _, o := range h.Final.Forbidden {
		out = append(out, fmt.Sprintf("%s exists in the namespace p-perm may not write", o.Name))
	}
	for _, o := range h.Final.ConfigMaps {
		if o.Terminating || o.Labels["l"] == "x" {
			continue
		}
		i := slices.IndexFunc(h.Final.Copies, func(c Object) bool { return c.Name == "copy-"+o.Name })
		if i < 0 || !maps.Equal(h.Final.Copies[i].Data, o.Data) {
			out = append(out, fmt.Sprintf("ConfigMap %s (data %v) has no up-to-date copy", o.Name, o.Data))
		}
	}
	return out
}

// ticksOnce: two ticks less than half a period apart, from two processes,
// come only within a fault window, and ticks do not stop for longer than
// two periods and slack outside one.
func ticksOnce(h *History) []string {
	const period = 2 * time.Second
	var ticks []Call
	for _, c := range h.Calls {
		if c.Rule == "p-tick" {
			ticks = append(ticks, c)
		}
	}
	slices.SortFunc(ticks, func(a, b Call) int { return a.At.Compare(b.At) })
	var out []string
	for i := 1; i < len(ticks); i++ {
		a, b := ticks[i-1], ticks[i]
		gap := b.At.Sub(a.At)
		if a.Proc != b.Proc && gap < period/2 && !h.faultNear("p-tick", a.At, b.At) {
			out = append(out, fmt.Sprintf("two ticks %v apart, at %s and %s, from two replicas", gap, h.at(a.At), h.at(b.At)))
		}
		if gap > 2*period+slack && !h.faultNear("p-tick", a.At, b.At) {
			out = append(out, fmt.Sprintf("no tick for %v, from %s to %s", gap.Round(time.Millisecond), h.at(a.At), h.at(b.At)))
		}
	}
	return out
}

// initialOnlyAtStart: an add with ctx.initial true is of an object that
// existed when the rule started: not of one the checker created after
// the rule, in that process and revision, had made a call that was not
// from its initial list (so it had listed), with no fault touching the
// rule (a restart, an edit of it, a shard move) between the create and
// the call. An edit of p-sel2, which restarts the informer it shares
// with p-sel, is none of p-sel's.
func initialOnlyAtStart(h *History) []string {
	type key struct {
		proc int
		rule string
		rev  int
	}
	listed := map[key]time.Time{} // the first call not from the initial list
	for _, c := range h.Calls {
		k := key{c.Proc, c.Rule, c.Rev}
		if _, ok := listed[k]; !ok && c.UID != "" && !c.Initial && c.Handler != "onTimer" {
			listed[k] = c.At
		}
	}
	var out []string
	for _, c := range h.Calls {
		if c.Handler != "onAdd" || !c.Initial {
			continue
		}
		i := slices.IndexFunc(h.Writes, func(w Write) bool { return w.UID == c.UID && w.Kind == Create })
		if i < 0 {
			continue
		}
		w := h.Writes[i]
		since, ok := listed[key{c.Proc, c.Rule, c.Rev}]
		if !ok || !w.At.After(since) || w.At.After(c.At) || h.faultNear(c.Rule, w.At, c.At) {
			continue
		}
		out = append(out, fmt.Sprintf("%s: onAdd(%s) at %s has ctx.initial true, but the checker created it at %s (resourceVersion %d), after the rule's first call that was not from its initial list (%s, process %d), and the rule did not restart between",
			c.Rule, c.Name, h.at(c.At), h.at(w.At), w.RV, h.at(since), c.Proc))
	}
	return out
}

// The selector probes (probes.go) log their selector as the values of
// label l it selects (Call.Sel) and the label l of the object they saw
// (Call.L, Call.OldL). The checker's writes are the only ones that set l:
// a ConfigMap is created with l=a, and SetLabel sets it.

// selects reports whether a selector probe's selector, its values
// comma-separated, selects label value l.
func selects(sel, l string) bool { return slices.Contains(strings.Split(sel, ","), l) }

// labelAt is the label l of uid in its state at resourceVersion rv, as
// the checker's writes left it, and whether the checker wrote uid by then.
func (h *History) labelAt(uid string, rv int64) (string, bool) {
	l, ok := "", false
	for _, w := range h.Writes {
		if w.UID != uid || w.RV > rv {
			continue
		}
		switch w.Kind {
		case Create:
			l, ok = "a", true
		case SetLabel:
			l, ok = w.Value, true
		}
	}
	return l, ok
}

// labelBy is the label l the checker's writes had given uid by t.
func (h *History) labelBy(uid string, t time.Time) string {
	l := ""
	for _, w := range h.Writes {
		if w.UID != uid || w.At.After(t) {
			continue
		}
		switch w.Kind {
		case Create:
			l = "a"
		case SetLabel:
			l = w.Value
		}
	}
	return l
}

// selectorSelects: every state a selector probe is called with, the old
// one of an onUpdate and the last matching one of an onDelete included,
// is one its selector selects; and the state of an onAdd or onUpdate has
// the label the checker had given the object at that resourceVersion.
// So an object that never matches is never delivered.
func selectorSelects(h *History) []string {
	var out []string
	for _, c := range h.Calls {
		if c.Sel == "" || c.UID == "" {
			continue
		}
		if !selects(c.Sel, c.L) {
			out = append(out, fmt.Sprintf("%s: %s(%s) at %s saw l=%q (resourceVersion %d), which its selector l in (%s) does not select", c.Rule, c.Handler, c.Name, h.at(c.At), c.L, c.RV, c.Sel))
		}
		if c.Handler == "onUpdate" && !selects(c.Sel, c.OldL) {
			out = append(out, fmt.Sprintf("%s: onUpdate(%s) at %s: the old object has l=%q (resourceVersion %d), which its selector l in (%s) does not select", c.Rule, c.Name, h.at(c.At), c.OldL, c.OldRV, c.Sel))
		}
		if l, ok := h.labelAt(c.UID, c.RV); ok && c.Handler != "onDelete" && l != c.L {
			out = append(out, fmt.Sprintf("%s: %s(%s) at %s saw l=%q at resourceVersion %d, where the checker had set l=%q", c.Rule, c.Handler, c.Name, h.at(c.At), c.L, c.RV, l))
		}
	}
	return out
}

// selectorEntersAndLeaves: in one process, for one revision of a
// selector probe (a rule's restart sends every object it selects as an
// initial add), the calls about an object go add, updates, delete, add…:
// no update or delete of an object the rule does not hold (it never
// entered the selector, or left it), and no second add of one it holds
// (a repeat). A repeat is allowed within a fault window of the rule's, as
// everywhere ("a restart"): an edit of p-sel2, which hands p-sel over, is
// none of p-sel's. With --shards an object that moves to another replica
// and back is added again, and the whole check rests within a fault
// window.
func selectorEntersAndLeaves(h *History) []string {
	type key struct {
		proc int
		rule string
		rev  int
		uid  string
	}
	var out []string
	held := map[key]Call{}
	for _, c := range h.Calls {
		if c.Sel == "" || c.UID == "" {
			continue
		}
		k := key{c.Proc, c.Rule, c.Rev, c.UID}
		last, holds := held[k]
		bad := ""
		switch c.Handler {
		case "onAdd":
			if holds && !h.faultNear(c.Rule, c.At.Add(-time.Second), c.At) {
				bad = "is an add of an object the rule holds"
			}
			held[k] = c
		case "onUpdate":
			if !holds {
				bad = "is an update of an object the rule does not hold: entering the selector is an onAdd"
			}
			held[k] = c
		case "onDelete":
			// delivery.md, "What a restart replays": a deleted object
			// held by the rule's finalizer gets its onDelete when the
			// rule starts, with no add before it.
			if !holds && !(c.Deleting && slices.Contains(strings.Split(c.Fin, ","), "kreact.dev/"+c.Rule)) {
				bad = "is a delete of an object the rule does not hold"
			}
			delete(held, k)
		}
		if bad == "" || (h.Shards && h.faultNear(c.Rule, c.At.Add(-time.Second), c.At)) {
			continue
		}
		before := "no call before it"
		if holds {
			before = fmt.Sprintf("its last call was %s at %s (l=%q)", last.Handler, h.at(last.At), last.L)
		}
		out = append(out, fmt.Sprintf("%s: %s(%s) at %s (l=%q, resourceVersion %d, initial %v) %s; %s", c.Rule, c.Handler, c.Name, h.at(c.At), c.L, c.RV, c.Initial, bad, before))
	}
	return out
}

// selectorEveryMove: p-sel (delivery every) is called once for each change
// after which its selector selects the object, with exactly that state;
// once with onDelete for each change that takes the object out of it,
// with the state before (the API server's selector gives that state the
// change's resourceVersion; kreact's own, its own); and with an onDelete
// after the delete of an object it selects; when no fault touching p-sel
// was near. An edit of p-sel2, which restarts the shared informer under
// p-sel, is no fault of p-sel's.
func selectorEveryMove(h *History) []string {
	const rule = "p-sel"
	sel := strings.Join(selectorOf(rule, 0), ",")
	var out []string
	for i, w := range h.Writes {
		if w.Resource != "configmaps" || h.faultNear(rule, w.At.Add(-2*time.Second), w.At.Add(slack)) || w.At.Add(slack).After(h.OpsEnd) || h.switching(w.At) {
			continue
		}
		// The checker's write before w: the state before w has its label.
		var prev Write
		for _, p := range h.Writes[:i] {
			if p.UID == w.UID && p.Kind != Delete {
				prev = p
			}
		}
		pl, _ := h.labelAt(w.UID, prev.RV)
		wasIn := prev.UID != "" && selects(sel, pl)
		calls := h.calls(rule, w.UID, "")
		count := func(match func(c Call) bool) int {
			n := 0
			for _, c := range calls {
				if match(c) {
					n++
				}
			}
			return n
		}
		l, _ := h.labelAt(w.UID, w.RV)
		switch {
		case w.Kind == Delete:
			if n := count(func(c Call) bool { return c.Handler == "onDelete" && c.RV > prev.RV }); wasIn && n == 0 {
				out = append(out, fmt.Sprintf("delete configmaps/%s at %s (l=%s): no onDelete of %s after resourceVersion %d", w.Name, h.at(w.At), pl, rule, prev.RV))
			}
		case selects(sel, l):
			if n := count(func(c Call) bool { return c.RV == w.RV && c.Handler != "onDelete" }); n != 1 {
				out = append(out, fmt.Sprintf("%s %s/%s=%s at %s (resourceVersion %d, l=%s): %d calls of %s saw it, want 1", w.Kind, w.Resource, w.Name, w.Value, h.at(w.At), w.RV, l, n, rule))
			}
		case wasIn:
			if n := count(func(c Call) bool { return c.Handler == "onDelete" && c.RV >= prev.RV && c.RV <= w.RV }); n != 1 {
				out = append(out, fmt.Sprintf("%s %s/%s=%s at %s (resourceVersion %d) took it out of l in (%s): %d onDelete of %s with a state from resourceVersion %d to %d, want 1",
					w.Kind, w.Resource, w.Name, w.Value, h.at(w.At), w.RV, sel, n, rule, prev.RV, w.RV))
			}
		}
	}
	return out
}

// selectorFinalView: once kreact has settled, what each selector probe's
// running revision holds, by its calls in the processes still running
// (an add or update holds an object, a delete lets it go), is what its
// selector selects: every object it selects, in its last state the
// checker wrote or a newer one, and (with one replica; with --shards an
// object that moved away is not let go) nothing else. So no move into or
// out of the selector is lost across kills, restarts, API server
// restarts and hand-overs, and an object that left the selector while
// kreact was down is not held.
func selectorFinalView(h *History) []string {
	var out []string
	live := func(p int) bool { return h.Procs[p].End.IsZero() || !h.Procs[p].End.Before(h.End) }
	for _, rule := range []string{"p-sel", "p-sel2"} {
		rev := 0
		for _, op := range h.Ops {
			if op.Kind == Edit && op.Rule == rule {
				rev++
			}
		}
		sel := strings.Join(selectorOf(rule, rev), ",")
		holds := map[int]map[string]Call{} // proc, uid
		for _, c := range h.Calls {
			if c.Rule != rule || c.Rev != rev || c.UID == "" || !live(c.Proc) {
				continue
			}
			if holds[c.Proc] == nil {
				holds[c.Proc] = map[string]Call{}
			}
			if c.Handler == "onDelete" {
				delete(holds[c.Proc], c.UID)
			} else {
				holds[c.Proc][c.UID] = c
			}
		}
		selected := map[string]Object{}
		for _, o := range h.Final.ConfigMaps {
			if selects(sel, o.Labels["l"]) {
				selected[o.UID] = o
			}
		}
		for uid, o := range selected {
			if o.Terminating {
				continue
			}
			var lastRV int64
			for _, w := range h.Writes {
				if w.UID == uid && w.Kind != Delete {
					lastRV = w.RV
				}
			}
			if !slices.ContainsFunc(slices.Collect(maps.Values(holds)), func(m map[string]Call) bool { return m[uid].RV >= lastRV && m[uid].UID != "" }) {
				out = append(out, fmt.Sprintf("%s (revision %d, l in (%s)): ConfigMap %s (uid %s, l=%s) is selected at the end, but the rule does not hold it in the state the checker last wrote (resourceVersion %d): %s",
					rule, rev, sel, o.Name, uid, o.Labels["l"], lastRV, h.heldBy(holds, uid)))
			}
		}
		if h.Shards {
			continue
		}
		for _, m := range holds {
			for uid, c := range m {
				if _, ok := selected[uid]; ok {
					continue
				}
				now := "is gone"
				if i := slices.IndexFunc(h.Final.ConfigMaps, func(o Object) bool { return o.UID == uid }); i >= 0 {
					now = fmt.Sprintf("has l=%s", h.Final.ConfigMaps[i].Labels["l"])
				}
				out = append(out, fmt.Sprintf("%s (revision %d, l in (%s)): the rule still holds ConfigMap %s (uid %s), whose last call was %s at %s (l=%s); it %s, and no onDelete came",
					rule, rev, sel, c.Name, uid, c.Handler, h.at(c.At), c.L, now))
			}
		}
	}
	return out
}

// heldBy says what the processes of holds hold of uid.
func (h *History) heldBy(holds map[int]map[string]Call, uid string) string {
	var parts []string
	for p, m := range holds {
		if c, ok := m[uid]; ok {
			parts = append(parts, fmt.Sprintf("process %d's last call was %s at %s (resourceVersion %d)", p, c.Handler, h.at(c.At), c.RV))
		}
	}
	if len(parts) == 0 {
		return "no call of a running process holds it"
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// calls returns the calls of rule about uid, in the order they were made
// (handler "" for any).
func (h *History) calls(rule, uid, handler string) []Call {
	var out []Call
	for _, c := range h.Calls {
		if c.Rule == rule && c.UID == uid && (handler == "" || c.Handler == handler) {
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Call) int { return a.At.Compare(b.At) })
	return out
}

// lastRV is the newest resourceVersion a call of rule saw of uid.
func (h *History) lastRV(rule, uid string) int64 {
	var rv int64
	for _, c := range h.calls(rule, uid, "") {
		rv = max(rv, c.RV)
	}
	return rv
}

// switching reports whether the shared informer of the selector probes
// may have been restarting at t, for an edit of p-sel2 (up to switchTime
// after it, or a second before: what the old informer had not yet handed
// its handlers when it stopped is handed over too): rules.md says that
// what changed while it restarted reaches the rules already on it as the
// difference, one call per object to its state then, even with delivery:
// every. Nothing is lost or repeated:
// the other selector checks still hold across it.
func (h *History) switching(t time.Time) bool {
	return slices.ContainsFunc(h.Faults, func(f Fault) bool {
		return f.Kind == Edit && f.Rule == "p-sel2" && !f.From.Add(-time.Second).After(t) && !f.From.Add(switchTime).Before(t)
	})
}

// faultNear reports whether a fault that touches rule overlaps [from, to]
// extended by the grace period.
func (h *History) faultNear(rule string, from, to time.Time) bool {
	g := grace
	if h.Shards {
		g = shardGrace
	}
	return slices.ContainsFunc(h.Faults, func(f Fault) bool {
		return (f.Rule == "" || f.Rule == rule) && !f.From.After(to) && !f.To.Add(g).Before(from)
	})
}

// deleteAfter returns the delete of write i's object that follows it.
func (h *History) deleteAfter(i int) (Write, bool) {
	for _, w := range h.Writes[i+1:] {
		if w.Kind == Delete && w.UID == h.Writes[i].UID {
			return w, true
		}
	}
	return Write{}, false
}

// deletedBefore reports whether the checker deleted uid before t.
func (h *History) deletedBefore(uid string, t time.Time) bool {
	return slices.ContainsFunc(h.Writes, func(w Write) bool { return w.Kind == Delete && w.UID == uid && w.At.Before(t) })
}

// lastFlip is when the checker made the last change of widget uid's
// spec.ready that p-cond saw: changes coalesced away (false, then true
// again before a call) are no transition.
func (h *History) lastFlip(uid string) time.Time {
	var at time.Time
	seen := ""
	for _, c := range h.calls("p-cond", uid, "") {
		var set *Write // the last write of spec.ready in the state c saw
		for i, w := range h.Writes {
			if w.UID == uid && (w.Kind == Create || w.Kind == SetReady) && w.RV <= c.RV {
				set = &h.Writes[i]
			}
		}
		if set != nil && set.Value != seen {
			at, seen = set.At, set.Value
		}
	}
	return at
}

// at formats t as an offset from the run's start, as the report does.
func (h *History) at(t time.Time) string {
	return "+" + t.Sub(h.Start).Round(time.Millisecond).String()
}

func (h *History) times(calls []Call) string {
	s := ""
	for i, c := range calls {
		if i > 0 {
			s += ", "
		}
		s += fmt.Sprintf("%s in process %d", h.at(c.At), c.Proc)
	}
	return s
}
