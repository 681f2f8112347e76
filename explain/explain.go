package explain

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// Object is the answer about one object: what every loaded rule knows of
// it. Its JSON (and YAML) is what `kreact explain -o json|yaml` prints
// and what a running kreact answers over HTTP: a documented schema
// (docs/cli.md), of lower-case keys, words for what is one of a few
// values, and Go duration strings for lengths of time.
type Object struct {
	// Resource is the object's resource, as kubectl names it fully:
	// "configmaps", "deployments.apps".
	Resource string `json:"resource"`
	// Namespace and Name name the object.
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Exists is false when the object is not in the cluster (or, under
	// kreact test, not in the case's cache) at the time of the answer:
	// whether a watch takes it is not known then, but its trace, if any,
	// is told.
	Exists bool `json:"exists"`
	// Process says which kreact answered: the replica with --shards, or
	// "" for the only one.
	Process string `json:"process,omitempty"`
	// Note says which other process to ask, when another one handles
	// the object (another replica's shard).
	Note string `json:"note,omitempty"`
	// Rules are the answers of the loaded rules, in load order.
	Rules []Rule `json:"rules"`
}

// Rule is what one rule knows of the object.
type Rule struct {
	// Name and Position are the rule's (metadata.name and where it is).
	Name     string `json:"name"`
	Position string `json:"position"`
	// Watched is true when one of the rule's spec.watch entries takes
	// the object.
	Watched bool `json:"watched"`
	// Watches says, per spec.watch entry of the object's resource,
	// whether it takes the object and why not.
	Watches []delivery.WatchMatch `json:"watches,omitempty"`
	// Traces are the rule's records of the object, one per informer of
	// its plan that saw it, and what waits for it.
	Traces []Trace `json:"traces,omitempty"`
	// Note says what else matters: the rule runs in another process, or
	// is not running.
	Note string `json:"note,omitempty"`
}

// Trace is what a rule knows of the object as one informer of its plan
// saw it (delivery.ObjectTrace).
type Trace struct {
	// Informer is the index of the informer in the rule's plan
	// (delivery.Plan): 0 unless several of the rule's informers hold the
	// object.
	Informer int `json:"informer"`
	// Records are the latest records, oldest first.
	Records []Record `json:"records,omitempty"`
	// Pending says what waits for the object: a call, a timer, the
	// rule's finalizer.
	Pending []string `json:"pending,omitempty"`
}

// Record is one entry of a Trace (delivery.Record).
type Record struct {
	// At is when it happened, in UTC; a call's is when it started.
	At time.Time `json:"at"`
	// Kind is what the record is about: "change", "call" or "action".
	Kind string `json:"kind"`
	// Event is a change's type, or the event of a call's handler: "add",
	// "update", "delete", "timer", "tick".
	Event string `json:"event,omitempty"`
	// Result is a change's decision ("queued", "coalesced", "not
	// handled", "ignored", "cancelled", "dropped", "seen"), a call's
	// outcome ("ok", "failed; retry 1 of 3 to come", "given up after 3
	// retries"…) or an action's ("ok", "failed", "dry-run").
	Result string `json:"result"`
	// Detail says why, or the error.
	Detail string `json:"detail,omitempty"`
	// Duration is how long a call or an action took, to the microsecond;
	// omitted when zero.
	Duration Duration `json:"duration,omitzero"`
	// Retry is, for a call, how many times it had been retried.
	Retry int `json:"retry,omitempty"`
	// Verb and Target are an action's: "patch", "configmaps shop/web".
	Verb   string `json:"verb,omitempty"`
	Target string `json:"target,omitempty"`
}

// Duration is a length of time whose JSON is a Go duration string
// ("445µs", "1.5s"), which time.ParseDuration reads.
type Duration time.Duration

// String formats d as time.Duration does.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a Go duration string.
func (d *Duration) UnmarshalJSON(data []byte) error {
	var s string
	if err := json.Unmarshal(data, &s); err != nil {
		return fmt.Errorf("a duration is a string such as \"445µs\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// traces converts what a delivery core knows of an object to the
// answer's form.
func traces(in []delivery.ObjectTrace) []Trace {
	var out []Trace
	for _, t := range in {
		o := Trace{Informer: t.Source, Pending: t.Pending}
		for _, r := range t.Records {
			o.Records = append(o.Records, Record{
				At: r.At.UTC(), Kind: string(r.Kind), Event: string(r.Event),
				Result: r.Result, Detail: r.Detail, Duration: Duration(r.Duration.Round(time.Microsecond)),
				Retry: r.Retry, Verb: string(r.Verb), Target: r.Target,
			})
		}
		out = append(out, o)
	}
	return out
}

// ForRule is what rule res, delivered by d (nil when it does not run
// here), knows of the object of resource gr named namespace/name, whose
// current state is obj (nil when it does not exist).
func ForRule(res *rules.Resolved, d *delivery.Core, gr schema.GroupResource, namespace, name string, obj *unstructured.Unstructured) Rule {
	out := Rule{Name: res.Rule.Name, Position: res.Rule.Pos.String()}
	if obj != nil {
		out.Watches = delivery.Watches(res, gr, obj)
		for _, w := range out.Watches {
			out.Watched = out.Watched || w.Watched
		}
	}
	if d != nil {
		out.Traces = traces(d.Trace(gr, namespace, name))
		if !d.NeedsWatch() {
			out.Note = "its script has admission handlers only, which the API server calls before it stores a change: kreact watches none of the changes, and keeps no record of them"
		}
	}
	return out
}

// WriteText prints the answer for people.
func (o *Object) WriteText(w io.Writer) {
	name := o.Name
	if o.Namespace != "" {
		name = o.Namespace + "/" + o.Name
	}
	fmt.Fprintf(w, "%s %s", o.Resource, name)
	if o.Process != "" {
		fmt.Fprintf(w, " (answered by %s)", o.Process)
	}
	fmt.Fprintln(w)
	if o.Note != "" {
		fmt.Fprintf(w, "  %s\n", o.Note)
	}
	if !o.Exists {
		fmt.Fprintln(w, "  the object does not exist (now); its trace, if any, follows")
	}
	if len(o.Rules) == 0 {
		fmt.Fprintln(w, "  no rule is loaded")
	}
	for _, r := range o.Rules {
		fmt.Fprintf(w, "  rule %s", r.Name)
		if r.Position != "" {
			fmt.Fprintf(w, " (%s)", r.Position)
		}
		fmt.Fprint(w, ": ")
		switch {
		case !o.Exists:
			// Whether a watch would take it is not known: only its trace.
			fmt.Fprintln(w, "deleted")
		case r.Watched:
			fmt.Fprintln(w, "watched")
		default:
			fmt.Fprintln(w, "not watched")
		}
		for _, m := range r.Watches {
			for _, why := range m.Reasons {
				fmt.Fprintf(w, "    %s\n", why)
			}
		}
		if r.Note != "" {
			fmt.Fprintf(w, "    %s\n", r.Note)
		}
		for _, t := range r.Traces {
			if len(r.Traces) > 1 {
				fmt.Fprintf(w, "    through informer %d of the rule's plan:\n", t.Informer)
			}
			for _, rec := range t.Records {
				fmt.Fprintf(w, "    %s\n", recordLine(rec))
			}
			if len(t.Pending) > 0 {
				fmt.Fprintf(w, "    waiting: %s\n", strings.Join(t.Pending, "; "))
			}
		}
		if (r.Watched || !o.Exists) && len(r.Traces) == 0 && r.Note == "" {
			fmt.Fprintln(w, "    no record of it lately")
		}
	}
}

// recordLine prints one record: time, what, result, detail.
func recordLine(r Record) string {
	var b strings.Builder
	b.WriteString(r.At.UTC().Format("15:04:05.000"))
	b.WriteByte(' ')
	switch delivery.RecordKind(r.Kind) {
	case delivery.RecordChange:
		fmt.Fprintf(&b, "%s: %s", r.Event, r.Result)
	case delivery.RecordCall:
		// The result says the retry; Record.Retry is for programs.
		fmt.Fprintf(&b, "%s: %s (%s)", event.Type(r.Event).Handler(), r.Result, r.Duration)
	case delivery.RecordAction:
		fmt.Fprintf(&b, "%s %s: %s (%s)", r.Verb, r.Target, r.Result, r.Duration)
	}
	if r.Detail != "" {
		b.WriteString(": ")
		b.WriteString(r.Detail)
	}
	return b.String()
}

// Only keeps the answer of the rule named rule, and reports whether it
// was there; if not, it leaves o as it was.
func (o *Object) Only(rule string) bool {
	i := slices.IndexFunc(o.Rules, func(r Rule) bool { return r.Name == rule })
	if i < 0 {
		return false
	}
	o.Rules = o.Rules[i : i+1]
	return true
}

// RuleNames returns the names of the rules that answered, in load order.
func (o *Object) RuleNames() []string {
	names := make([]string, len(o.Rules))
	for i, r := range o.Rules {
		names[i] = r.Name
	}
	return names
}

// Write prints the answer in format: "json" or "yaml" (the Object's
// schema, see Object), else text for people (WriteText).
func (o *Object) Write(w io.Writer, format string) error {
	switch format {
	case "json":
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(o)
	case "yaml":
		data, err := yaml.Marshal(o)
		if err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	o.WriteText(w)
	return nil
}
