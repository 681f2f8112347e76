package ruleobjects

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/metrics"
	"github.com/kreact/kreact/rules"
)

// The reasons of the Ready condition.
const (
	ReasonRunning = "Running" // True: the rule runs and has caught up
	ReasonSyncing = "Syncing" // Unknown: it runs, its caches are filling
	ReasonWaiting = "Waiting" // False: its resources are not served yet
	ReasonInvalid = "Invalid" // False: this generation has errors
	ReasonLoading = "Loading" // Unknown: not loaded yet
	ReasonNotHere = "NotHere" // Unknown: the engine does not report it
	// True: it runs in the isolated rules' process (spec.isolate, or moved
	// there for misbehaving).
	ReasonIsolated = "RunningIsolated"
	conditionType  = "Ready"
)

// view is what a status is made of: the object, the engine's word on its
// rule, and its counts.
type view struct {
	o       *object
	engine  *engine.Status // nil when the engine does not report the rule
	counts  metrics.RuleCounts
	actions actions.Stats
	// elsewhere is set when the rule runs in the isolated rules' process.
	elsewhere bool
}

// status returns the status of v: the whole status subresource as kreact
// writes it. lastTransitionTime is the previous condition's when the
// condition's status did not change.
func status(v view, now time.Time) map[string]any {
	o := v.o
	cond := map[string]any{"type": conditionType, "observedGeneration": o.generation}
	state, reason, msg := "Unknown", ReasonLoading, "not loaded yet"
	switch {
	case hasErrors(o.problems):
		state, reason = "False", ReasonInvalid
		msg = fmt.Sprintf("generation %d has %d problem(s): %s", o.generation, len(o.problems), firstError(o.problems))
		if o.running != 0 && o.running != o.generation {
			msg += fmt.Sprintf("; generation %d keeps running", o.running)
		}
	case v.engine == nil && v.elsewhere:
		state, reason, msg = "True", ReasonIsolated, "running in the isolated rules' process; its counts are that process's metrics"
	case v.engine == nil && o.running != 0:
		reason, msg = ReasonNotHere, "loaded, but not running in this process (isolated, or stopped)"
	case v.engine == nil:
	case v.engine.Waiting != "":
		state, reason, msg = "False", ReasonWaiting, v.engine.Waiting
	case !v.engine.Synced:
		reason, msg = ReasonSyncing, "running; its caches are filling"
	default:
		state, reason, msg = "True", ReasonRunning, "running"
		if n := len(v.engine.Missing); n > 0 {
			msg = fmt.Sprintf("running, but %s may not do %d thing(s) the rule declares (problems)", v.engine.Missing[0].Identity, n)
		}
	}
	cond["status"], cond["reason"], cond["message"] = state, reason, msg
	cond["lastTransitionTime"] = now.UTC().Format(time.RFC3339)
	if prev := previousReady(o.status); prev != nil && prev["status"] == state {
		if t, ok := prev["lastTransitionTime"].(string); ok {
			cond["lastTransitionTime"] = t
		}
	}
	st := map[string]any{
		"observedGeneration": o.generation,
		"conditions":         []any{cond},
		"problems":           append(problems(o.problems), missing(v.engine)...),
		"calls":              v.counts.Calls,
		"failures":           v.counts.Failures,
		"actions":            v.actions.Succeeded,
		"givenUp":            v.counts.GivenUp + v.actions.GaveUp,
		"lastError":          nil,
	}
	if v.counts.LastError != "" {
		st["lastError"] = map[string]any{"message": diag.Sprintf("%s", v.counts.LastError), "time": v.counts.LastErrorAt.UTC().Format(time.RFC3339)}
	}
	return st
}

func firstError(l diag.ErrorList) string {
	for _, e := range l {
		if !e.Warning {
			return problemText(e)
		}
	}
	return ""
}

// problemText is a problem as the status's message says it: the field
// and the message, without the object's name, which is the object's own.
func problemText(e *diag.Error) string {
	field, pos, msg := problemParts(e)
	switch {
	case pos != "":
		return field + ":" + pos + ": " + msg
	case field != "":
		return field + ": " + msg
	}
	return msg
}

// problemParts splits a problem into its field, its position within the
// field (line:col, for the script) and its message.
func problemParts(e *diag.Error) (field, pos, msg string) {
	msg = e.Msg
	if _, f, ok := strings.Cut(e.Pos.File, ": "); ok {
		field = f // rule/NS/NAME: spec.script
		if e.Pos.Line > 0 {
			pos = e.Pos.LineCol()
		}
		return field, pos, msg
	}
	if f, rest, ok := strings.Cut(msg, ": "); ok && (strings.HasPrefix(f, "spec.") || strings.HasPrefix(f, "metadata.")) && !strings.Contains(f, " ") {
		return f, "", rest
	}
	return "", "", msg
}

func problems(l diag.ErrorList) []any {
	out := []any{}
	for _, e := range l {
		field, pos, msg := problemParts(e)
		p := map[string]any{"message": msg, "severity": "error"}
		if e.Warning {
			p["severity"] = "warning"
		}
		if field != "" {
			p["field"] = field
		}
		if pos != "" {
			p["position"] = pos
		}
		out = append(out, p)
	}
	return out
}

// missing are the permissions the rule's identity lacks, as the engine
// found them when it loaded the rule, as warnings: the rule runs, and
// what it may not do fails when it tries.
func missing(s *engine.Status) []any {
	if s == nil {
		return nil
	}
	var out []any
	for _, m := range s.Missing {
		field := "spec.permissions"
		switch m.What {
		case "watch":
			field = "spec.watch"
		case "read":
			field = "spec.reads"
		}
		out = append(out, map[string]any{"field": field, "severity": "warning",
			"message": fmt.Sprintf("%s may not %s", m.Identity, m)})
	}
	return out
}

func previousReady(st map[string]any) map[string]any {
	conds, _ := st["conditions"].([]any)
	for _, c := range conds {
		if m, ok := c.(map[string]any); ok && m["type"] == conditionType {
			return m
		}
	}
	return nil
}

// counted are the fields of a status that count; a change in them alone
// is written at most once per Refresh.
var counted = []string{"calls", "failures", "actions", "givenUp", "lastError"}

// split returns the JSON of a status without its counts, and of its counts.
func split(st map[string]any) (rest, counts string) {
	c := map[string]any{}
	r := map[string]any{}
	for k, v := range st {
		r[k] = v
	}
	for _, k := range counted {
		c[k] = st[k]
		delete(r, k)
	}
	// The transition time follows the condition; it is no change of its own.
	rb, _ := json.Marshal(withoutTimes(r))
	cb, _ := json.Marshal(c)
	return string(rb), string(cb)
}

func withoutTimes(st map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range st {
		out[k] = v
	}
	if conds, ok := st["conditions"].([]any); ok {
		var cs []any
		for _, c := range conds {
			m := map[string]any{}
			for k, v := range c.(map[string]any) {
				if k != "lastTransitionTime" {
					m[k] = v
				}
			}
			cs = append(cs, m)
		}
		out["conditions"] = cs
	}
	return out
}

// writeStatuses writes the status of every object whose status changed,
// and of those whose counts alone changed if they were last written a
// Refresh ago.
func (r *runner) writeStatuses(ctx context.Context, now time.Time) {
	if r.opts.Client == nil {
		return
	}
	byRule := map[string]*engine.Status{}
	statuses := r.opts.Loader.Status()
	for i := range statuses {
		byRule[statuses[i].Rule] = &statuses[i]
	}
	var counts map[string]metrics.RuleCounts
	if r.opts.Counts != nil {
		counts = r.opts.Counts()
	}
	var acts map[string]actions.Stats
	if r.opts.Actions != nil {
		acts = r.opts.Actions()
	}
	elsewhere := map[string]bool{}
	if r.opts.Elsewhere != nil {
		for _, name := range r.opts.Elsewhere() {
			elsewhere[name] = true
		}
	}
	type write struct {
		o          *object
		st         map[string]any
		rest, cnts string
	}
	var writes []write
	r.mu.Lock()
	for _, o := range r.objects {
		name := o.ref.RuleName()
		st := status(view{o: o, engine: byRule[name], counts: counts[name], actions: acts[name], elsewhere: elsewhere[name]}, now)
		rest, cnt := split(st)
		switch {
		case rest != o.written:
		case cnt != o.countsAtWr && now.Sub(o.writtenAt) >= r.refresh:
		default:
			continue
		}
		writes = append(writes, write{o, st, rest, cnt})
	}
	r.mu.Unlock()
	for _, w := range writes {
		if err := r.limit.Wait(ctx); err != nil {
			return
		}
		r.mu.Lock()
		o, current := w.o, r.objects[w.o.ref.Source()] == w.o
		uid := o.uid
		r.mu.Unlock()
		if !current {
			continue // deleted, or loaded anew meanwhile
		}
		if err := r.patchStatus(ctx, o.ref, o.gvr, uid, w.st); err != nil {
			if !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
				r.log.Warn("rule object: status not written", "object", o.ref.Source(), "error", err)
			}
			continue
		}
		r.mu.Lock()
		o.written, o.countsAtWr, o.writtenAt = w.rest, w.cnts, now
		r.mu.Unlock()
	}
}

// patchStatus writes st as the status of the object ref, if it is still
// the object of uid.
func (r *runner) patchStatus(ctx context.Context, ref rules.ObjectRef, gvr schema.GroupVersionResource, uid types.UID, st map[string]any) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"uid": uid}, "status": st})
	if err != nil {
		return err
	}
	var ri dynamic.ResourceInterface = r.opts.Client.Resource(gvr)
	if ref.Namespace != "" {
		ri = r.opts.Client.Resource(gvr).Namespace(ref.Namespace)
	}
	_, err = ri.Patch(ctx, ref.Name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: "kreact"}, "status")
	return err
}
