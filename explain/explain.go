// Package explain answers "why did my rule act on this object, or not?".
// For each loaded rule it tells whether a spec.watch entry takes the
// object, and if not which namespace or selector leaves it out, where
// that is written and how to fix it (delivery.Watches); then what the
// rule's delivery core recorded about the object (delivery.Core.Trace):
// the decision about each change (queued, coalesced, not handled by
// spec.events, ignored by a spec.ignoreChanges path…), each call with its
// outcome, retries and error, each action with its result, and what
// waits (a call, a timer, the finalizer).
//
// The same code serves `kreact test --explain`, which prints it for the
// objects of a failing case, and `kreact explain`, which asks a running
// kreact for it over HTTP (Handler, Ask; Live is a running kreact's
// answer). That endpoint is off unless
// `kreact run --explain-address` names a loopback address (package
// metrics refuses any other): the answer holds object names, label
// values and script errors, so nothing outside the Pod reaches it
// (kubectl exec or port-forward do), and it only reads. With --shards,
// each replica answers for itself and says which replica's shard holds
// the object; the rules of the isolated rules' process are listed as
// such, unanswered.
//
// A Handler answers from what the process holds, and one GET of the
// object: the traces are bounded (delivery.DefaultTraceSize per rule)
// and scanned, not indexed, so an answer costs microseconds per rule
// whatever the number of objects watched.
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
	"github.com/kreact/kreact/rules"
)

// Object is the answer about one object: what every loaded rule knows of
// it.
type Object struct {
	// Resource, Namespace and Name name the object.
	Resource  string `json:"resource"`
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
	Traces []delivery.ObjectTrace `json:"traces,omitempty"`
	// Note says what else matters: the rule runs in another process, or
	// is not running.
	Note string `json:"note,omitempty"`
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
		out.Traces = d.Trace(gr, namespace, name)
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
			fmt.Fprintln(w)
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
				fmt.Fprintf(w, "    through informer %d of the rule's plan:\n", t.Source)
			}
			for _, rec := range t.Records {
				fmt.Fprintf(w, "    %s\n", recordLine(rec))
			}
			if len(t.Pending) > 0 {
				fmt.Fprintf(w, "    waiting: %s\n", strings.Join(t.Pending, "; "))
			}
		}
		if o.Exists && r.Watched && len(r.Traces) == 0 && r.Note == "" {
			fmt.Fprintln(w, "    no record of it lately")
		}
	}
}

// recordLine prints one record: time, what, result, detail.
func recordLine(r delivery.Record) string {
	var b strings.Builder
	b.WriteString(r.At.UTC().Format("15:04:05.000"))
	b.WriteByte(' ')
	switch r.Kind {
	case delivery.RecordChange:
		fmt.Fprintf(&b, "%s: %s", r.Event, r.Result)
	case delivery.RecordCall:
		// The result says the retry; Record.Retry is for programs.
		fmt.Fprintf(&b, "%s: %s (%s)", r.Event.Handler(), r.Result, r.Duration.Round(time.Microsecond))
	case delivery.RecordAction:
		fmt.Fprintf(&b, "%s %s: %s (%s)", r.Verb, r.Target, r.Result, r.Duration.Round(time.Microsecond))
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
// fields), else text for people (WriteText).
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
