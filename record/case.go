package record

import (
	"bytes"
	"fmt"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/ruletest"
)

// Change is one change of a recorded object.
type Change struct {
	// Type is event.Add, event.Update or event.Delete.
	Type event.Type
	// Initial marks an add of the watch's initial list: the object was
	// there when the recording started.
	Initial bool
	// Object is the object after the change (for a delete, its last
	// state), trimmed (Trim).
	Object *unstructured.Unstructured
	// At is when the change was observed.
	At time.Time
}

// Recording is what a Recorder saw.
type Recording struct {
	// Rules are the rule files or directories, as the case names them
	// (relative to the case file).
	Rules []string
	// CRDs are the CRD files of the case's spec.crds, likewise.
	CRDs []string
	// Description is the case file's metadata.description.
	Description string
	// Start is when the rules started; End when the recording stopped.
	Start, End time.Time
	// Changes are the objects' changes, in the order observed.
	Changes []Change
	// Actions are the actions the rules asked for, in that order, as a
	// test expects them.
	Actions []ruletest.Fields
	// Errors are the script errors of the calls given up, in that order,
	// as a test expects them (substrings: without the position, whose
	// file the replay names from the case's spec.rules).
	Errors []string
}

// Trim returns a copy of obj without what a test ignores and no script
// needs: metadata.managedFields and metadata.resourceVersion.
func Trim(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	unstructured.RemoveNestedField(out.Object, "metadata", "managedFields")
	unstructured.RemoveNestedField(out.Object, "metadata", "resourceVersion")
	return out
}

// RelativeTo returns paths as a case file in dir names them: relative to
// dir, with forward slashes.
func RelativeTo(dir string, paths []string) ([]string, error) {
	absDir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, path := range paths {
		abs, err := filepath.Abs(path)
		if err != nil {
			return nil, err
		}
		rel, err := filepath.Rel(absDir, abs)
		if err != nil {
			return nil, err
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out, nil
}

// CasePaths returns rules and crds as a case file at output names them
// (RelativeTo its directory); an empty output is stdout, whose case
// names them from the working directory.
func CasePaths(output string, rules, crds []string) (rulePaths, crdPaths []string, err error) {
	dir := "."
	if output != "" {
		dir = filepath.Dir(output)
	}
	if rulePaths, err = RelativeTo(dir, rules); err != nil {
		return nil, nil, err
	}
	crdPaths, err = RelativeTo(dir, crds)
	return rulePaths, crdPaths, err
}

// The case file, its fields in the order docs/testing.md lists them.
type (
	caseFile struct {
		APIVersion string   `yaml:"apiVersion"`
		Kind       string   `yaml:"kind"`
		Metadata   metadata `yaml:"metadata"`
		Spec       spec     `yaml:"spec"`
	}
	metadata struct {
		Name        string `yaml:"name"`
		Description string `yaml:"description,omitempty"`
	}
	spec struct {
		Rules []string   `yaml:"rules"`
		CRDs  []string   `yaml:"crds,omitempty"`
		Now   string     `yaml:"now"`
		Cases []testCase `yaml:"cases"`
	}
	testCase struct {
		Name   string      `yaml:"name"`
		Events []caseEvent `yaml:"events"`
		Expect expect      `yaml:"expect"`
	}
	caseEvent struct {
		Add     map[string]any `yaml:"add,omitempty"`
		Initial bool           `yaml:"initial,omitempty"`
		Update  map[string]any `yaml:"update,omitempty"`
		Delete  map[string]any `yaml:"delete,omitempty"`
		Advance string         `yaml:"advance,omitempty"`
	}
	expect struct {
		Actions []ruletest.Fields `yaml:"actions"`
		Errors  []string          `yaml:"errors,omitempty"`
	}
)

// Case returns the recording as a RuleTest file of one case (see the
// package's doc).
func (r *Recording) Case() ([]byte, error) {
	start := r.Start.UTC().Truncate(time.Millisecond)
	c := testCase{Name: "recorded " + start.Format(time.RFC3339Nano), Expect: expect{Actions: r.Actions, Errors: r.Errors}}
	last := start
	advance := func(to time.Time) {
		if d := to.Sub(last).Round(time.Millisecond); d > 0 {
			c.Events = append(c.Events, caseEvent{Advance: d.String()})
			last = last.Add(d)
		}
	}
	for _, ch := range r.Changes {
		advance(ch.At)
		var ev caseEvent
		switch ch.Type {
		case event.Add:
			ev = caseEvent{Add: ch.Object.Object, Initial: ch.Initial}
		case event.Update:
			ev = caseEvent{Update: ch.Object.Object}
		case event.Delete:
			ev = caseEvent{Delete: ch.Object.Object}
		default:
			return nil, fmt.Errorf("record: change %q: want add, update or delete", ch.Type)
		}
		c.Events = append(c.Events, ev)
	}
	advance(r.End)
	if len(c.Events) == 0 {
		// A case needs an event; nothing happened, for less than a
		// millisecond.
		c.Events = append(c.Events, caseEvent{Advance: time.Millisecond.String()})
	}
	f := caseFile{
		APIVersion: ruletest.APIVersion, Kind: ruletest.Kind,
		Metadata: metadata{Name: "recorded", Description: r.Description},
		Spec:     spec{Rules: r.Rules, CRDs: r.CRDs, Now: start.Format(time.RFC3339Nano), Cases: []testCase{c}},
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("record: %w", err)
	}
	return b.Bytes(), nil
}
