package record

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/linediff"
	"github.com/kreact/kreact/ruletest"
)

// diffContext is how many unchanged lines a diff shows around a change,
// as diff -u and kubectl diff do.
const diffContext = 3

// Diff returns the change pl makes to its target as a unified diff of
// the object's YAML, "" when it changes no object or nothing in it.
func (pl Planned) Diff() string {
	if !changesObject(pl.Action.Verb) || (pl.After == nil && pl.Action.Verb != actions.Delete) {
		return ""
	}
	return linediff.Unified(objectYAML(pl.Before), objectYAML(pl.After), diffContext)
}

func objectYAML(obj *unstructured.Unstructured) string {
	if obj == nil {
		return ""
	}
	data, err := yaml.Marshal(obj.Object)
	if err != nil {
		return fmt.Sprintf("<cannot print: %v>\n", err)
	}
	return string(data)
}

// describe is one line saying what a asks, besides its target.
func describe(a actions.Action) string {
	s := string(a.Verb)
	if a.Subresource != "" {
		s += " " + a.Subresource
	}
	switch a.Verb {
	case actions.Patch:
		switch a.PatchType {
		case types.MergePatchType:
			s += " (merge)"
		case types.JSONPatchType:
			s += " (json)"
		}
	case actions.Event:
		s += fmt.Sprintf(" %s %s: %s", a.EventType, a.Reason, a.Message)
	case actions.SetCondition:
		if c := a.Condition; c != nil {
			s += fmt.Sprintf(" %s=%s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
		}
	case actions.HTTP:
		if r := a.Request; r != nil {
			s += " " + r.Method
		}
	}
	s += "  (rule " + a.Rule
	if a.Origin != (diag.Position{}) {
		s += ", " + a.Origin.String()
	}
	s += ")"
	if a.DryRun {
		s += " (the rule's spec.dryRun: sent with dryRun=All)"
	}
	return s
}

// writeAction writes pl for a person: what it asks, after mark, then,
// indented, why the API server would refuse it, or its diff.
func writeAction(w io.Writer, mark string, pl Planned) {
	fmt.Fprintf(w, "  %s%s\n", mark, describe(pl.Action))
	switch diff := pl.Diff(); {
	case pl.Err != "":
		fmt.Fprintf(w, "      refused by the API server: %s\n", pl.Err)
	case diff != "":
		for line := range strings.Lines(diff) {
			fmt.Fprintf(w, "      %s", line)
		}
	case !changesObject(pl.Action.Verb):
	case pl.Action.Verb == actions.Create && pl.Before != nil && pl.After == nil:
		fmt.Fprintln(w, "      (exists already: the create leaves it as it is)")
	case pl.Action.Verb == actions.Delete:
		fmt.Fprintln(w, "      (does not exist: nothing to delete)")
	case pl.After == nil:
		fmt.Fprintln(w, "      (no answer from the dry run to show)")
	default:
		fmt.Fprintln(w, "      (no change: the object already reads so)")
	}
}

// plural is n and noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// WriteText writes p for a person: per object, its actions in the order
// asked, each with the diff it makes (as the API server answered its dry
// run), then the errors of the calls, the rules that did not run, and a
// summary line.
func (p Plan) WriteText(w io.Writer) error {
	objs := p.ByObject()
	for i, o := range objs {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, o.Target)
		for _, pl := range o.Actions {
			writeAction(w, "", pl)
		}
	}
	writeErrors(w, len(objs) > 0, "calls that fail", p.Errors)
	writeErrors(w, len(objs) > 0 || len(p.Errors) > 0, "rules that do not run", p.Waiting)
	if len(objs) > 0 || len(p.Errors) > 0 || len(p.Waiting) > 0 {
		fmt.Fprintln(w)
	}
	_, err := fmt.Fprintf(w, "%s on %s, for %s handed to the rules; nothing was changed\n",
		plural(len(p.Actions), "action"), plural(len(objs), "object"), plural(p.Objects, "object"))
	return err
}

// writeErrors writes errs under title, after a blank line if after.
func writeErrors(w io.Writer, after bool, title string, errs []string) {
	if len(errs) == 0 {
		return
	}
	if after {
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, e := range errs {
		fmt.Fprintf(w, "  %s\n", e)
	}
}

// WriteText writes c for a person: per object whose actions differ, the
// actions only the running version (Old) takes, marked -, and those only
// the new version takes, marked +, each with its diff; then the errors
// that differ and a summary line.
func (c Comparison) WriteText(w io.Writer) error {
	removed, added := 0, 0
	for i, d := range c.Objects {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, d.Target)
		for _, pl := range d.Removed {
			writeAction(w, "- ", pl)
		}
		for _, pl := range d.Added {
			writeAction(w, "+ ", pl)
		}
		removed += len(d.Removed)
		added += len(d.Added)
	}
	writeErrors(w, len(c.Objects) > 0, "calls that fail only in the running version", c.ErrorsGone)
	writeErrors(w, len(c.Objects) > 0 || len(c.ErrorsGone) > 0, "calls that fail only in the new version", c.ErrorsNew)
	writeErrors(w, len(c.Objects) > 0 || len(c.ErrorsGone) > 0 || len(c.ErrorsNew) > 0, "rules of the new version that do not run", c.New.Waiting)
	if !c.Same() || len(c.New.Waiting) > 0 {
		fmt.Fprintln(w)
	}
	if c.Same() {
		_, err := fmt.Fprintf(w, "the new version takes the same %s as the running one, for %s handed to the rules; nothing was changed\n",
			plural(len(c.New.Actions), "action"), plural(c.New.Objects, "object"))
		return err
	}
	differ := plural(len(c.Objects), "object") + " differ"
	if len(c.Objects) == 1 {
		differ += "s"
	}
	_, err := fmt.Fprintf(w, "%s: %s only by the running version, %s only by the new one, for %s handed to the rules; nothing was changed\n",
		differ, plural(removed, "action"), plural(added, "action"), plural(c.New.Objects, "object"))
	return err
}

// The documents of -o yaml and -o json.
type (
	planDoc struct {
		// Handed is how many objects the rules were handed.
		Handed  int         `json:"handed"`
		Objects []objectDoc `json:"objects"`
		Errors  []string    `json:"errors,omitempty"`
		Waiting []string    `json:"waiting,omitempty"`
	}
	objectDoc struct {
		Resource  string      `json:"resource"`
		Namespace string      `json:"namespace,omitempty"`
		Name      string      `json:"name"`
		Actions   []actionDoc `json:"actions,omitempty"`
		Removed   []actionDoc `json:"removed,omitempty"`
		Added     []actionDoc `json:"added,omitempty"`
	}
	actionDoc struct {
		// Action is the action as a kreact test case expects it.
		Action map[string]any `json:"action"`
		Origin string         `json:"origin,omitempty"`
		Error  string         `json:"error,omitempty"`
		Diff   string         `json:"diff,omitempty"`
		// After is the object as the API server answered the dry run.
		After map[string]any `json:"after,omitempty"`
	}
	comparisonDoc struct {
		Handed     int         `json:"handed"`
		Same       bool        `json:"same"`
		Objects    []objectDoc `json:"objects"`
		ErrorsGone []string    `json:"errorsGone,omitempty"`
		ErrorsNew  []string    `json:"errorsNew,omitempty"`
		Waiting    []string    `json:"waiting,omitempty"`
	}
)

func actionDocs(ps []Planned) []actionDoc {
	var out []actionDoc
	for _, pl := range ps {
		d := actionDoc{Action: fieldsMap(pl.Fields), Error: pl.Err, Diff: pl.Diff()}
		if pl.Action.Origin != (diag.Position{}) {
			d.Origin = pl.Action.Origin.String()
		}
		if pl.After != nil {
			d.After = pl.After.Object
		}
		out = append(out, d)
	}
	return out
}

func newObjectDoc(t Target) objectDoc {
	return objectDoc{Resource: t.Resource, Namespace: t.Namespace, Name: t.Name}
}

// fieldsMap returns fs as a map, for JSON.
func fieldsMap(fs ruletest.Fields) map[string]any {
	m := make(map[string]any, len(fs))
	for _, f := range fs {
		if sub, ok := f.Value.(ruletest.Fields); ok {
			m[f.Key] = fieldsMap(sub)
		} else {
			m[f.Key] = f.Value
		}
	}
	return m
}

func (p Plan) doc() planDoc {
	d := planDoc{Handed: p.Objects, Objects: []objectDoc{}, Errors: p.Errors, Waiting: p.Waiting}
	for _, o := range p.ByObject() {
		od := newObjectDoc(o.Target)
		od.Actions = actionDocs(o.Actions)
		d.Objects = append(d.Objects, od)
	}
	return d
}

func (c Comparison) doc() comparisonDoc {
	d := comparisonDoc{Handed: c.New.Objects, Same: c.Same(), Objects: []objectDoc{}, ErrorsGone: c.ErrorsGone, ErrorsNew: c.ErrorsNew, Waiting: c.New.Waiting}
	for _, o := range c.Objects {
		od := newObjectDoc(o.Target)
		od.Removed, od.Added = actionDocs(o.Removed), actionDocs(o.Added)
		d.Objects = append(d.Objects, od)
	}
	return d
}

// Write writes p in format: "json", "yaml", or "" for WriteText.
func (p Plan) Write(w io.Writer, format string) error {
	if format == "" {
		return p.WriteText(w)
	}
	return writeDoc(w, format, p.doc())
}

// Changes reports whether p's rules would act: an action, or a handler
// call that fails.
func (p Plan) Changes() bool { return len(p.Actions) > 0 || len(p.Errors) > 0 }

// WritePreview writes the preview of plans in format (Write): one rule
// set's Plan, or with two, the running version's and an edit's, their
// Comparison. It reports whether the rules would act (Plan.Changes), with
// two whether the edit acts otherwise than the running version
// (Comparison.Same), even when the writing fails: kreact preview
// --exit-code tells them apart.
func WritePreview(w io.Writer, plans []Plan, format string) (changes bool, err error) {
	if len(plans) == 2 {
		c := Compare(plans[0], plans[1])
		return !c.Same(), c.Write(w, format)
	}
	return plans[0].Changes(), plans[0].Write(w, format)
}

// Write writes c in format: "json", "yaml", or "" for WriteText.
func (c Comparison) Write(w io.Writer, format string) error {
	if format == "" {
		return c.WriteText(w)
	}
	return writeDoc(w, format, c.doc())
}

func writeDoc(w io.Writer, format string, doc any) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = json.MarshalIndent(doc, "", "  ")
		data = append(data, '\n')
	case "yaml":
		data, err = yaml.Marshal(doc)
	default:
		return fmt.Errorf("output format %q: want json or yaml", format)
	}
	if err != nil {
		return fmt.Errorf("preview: %w", err)
	}
	_, err = w.Write(data)
	return err
}
