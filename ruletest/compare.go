package ruletest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/linediff"
)

// Field is one named value of an action. Value is a string, a bool, JSON
// data (patches, objects, bodies) or, for event and http, Fields.
type Field struct {
	Key   string
	Value any
}

// Fields are an action's fields in canonical order.
type Fields []Field

// Get returns the value of key and whether it is there.
func (fs Fields) Get(key string) (any, bool) {
	for _, f := range fs {
		if f.Key == key {
			return f.Value, true
		}
	}
	return nil, false
}

// MarshalYAML writes fs as a YAML mapping in its order, as --update
// writes expected actions.
func (fs Fields) MarshalYAML() (any, error) { return fieldsNode(fs), nil }

// get returns the value of key, or its zero value when it is absent: an
// absent string field is "", an absent dryRun false.
func (fs Fields) get(key string) any {
	if v, ok := fs.Get(key); ok {
		return v
	}
	return zero(key)
}

func zero(key string) any {
	switch key {
	case "patch", "object", "body", "headers", "observedGeneration":
		return nil
	case "dryRun", "allowed":
		return false
	case "warnings":
		return []any{}
	case "event", "condition", "http":
		return Fields(nil)
	}
	return ""
}

// normalize turns JSON data into the form json.Unmarshal gives (float64
// numbers), so that values compare by content whatever produced them.
func normalize(v any) any {
	if v == nil {
		return nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if err := json.Unmarshal(data, &out); err != nil {
		return v
	}
	return out
}

// ActionFields describes an action the way a test expects it: every field
// that is set, in canonical order. The rule's name is included when
// withRule is true.
func ActionFields(a actions.Action, withRule bool) Fields {
	var fs Fields
	add := func(key string, v any) { fs = append(fs, Field{key, v}) }
	if withRule {
		add("rule", a.Rule)
	}
	add("verb", string(a.Verb))
	if a.Verb != actions.HTTP {
		add("resource", a.Resource.GroupResource().String())
	}
	if a.Subresource != "" {
		add("subresource", a.Subresource)
	}
	if a.Namespace != "" {
		add("namespace", a.Namespace)
	}
	if a.Name != "" {
		add("name", a.Name)
	}
	switch a.Verb {
	case actions.Patch:
		switch a.PatchType {
		case types.MergePatchType:
			add("patchType", "merge")
		case types.JSONPatchType:
			add("patchType", "json")
		default:
			add("patchType", string(a.PatchType))
		}
		add("patch", decodeJSON(a.PatchData))
	case actions.Create, actions.Apply:
		add("object", normalize(a.Object))
	case actions.Event:
		add("event", Fields{{"type", a.EventType}, {"reason", a.Reason}, {"message", a.Message}})
	case actions.SetCondition:
		if c := a.Condition; c != nil {
			cf := Fields{{"type", c.Type}, {"status", c.Status}, {"reason", c.Reason}, {"message", c.Message}}
			if c.ObservedGeneration != 0 {
				cf = append(cf, Field{"observedGeneration", c.ObservedGeneration})
			}
			add("condition", cf)
		}
	case actions.HTTP:
		if r := a.Request; r != nil {
			h := Fields{{"method", r.Method}, {"url", r.URL}}
			if len(r.Headers) > 0 {
				h = append(h, Field{"headers", normalize(r.Headers)})
			}
			if len(r.Body) > 0 {
				h = append(h, Field{"body", decodeJSON(r.Body)})
			}
			add("http", h)
		}
	}
	if a.DryRun {
		add("dryRun", true)
	}
	return fs
}

// decodeJSON returns data as JSON data when it is JSON, else as a string.
func decodeJSON(data []byte) any {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return string(data)
	}
	return v
}

// partialKeys are the fields that a partial expectation compares as a
// subset.
var partialKeys = []string{"object", "patch"}

// A fieldSet is what a list of expectations compares: its fields in the
// order a diff shows them, and those always compared (actions, and the
// answers of admission handlers).
type fieldSet struct{ order, always []string }

// actionSet is the fieldSet of actions.
var actionSet = fieldSet{actionFields, alwaysCompared}

// matches reports whether actual satisfies the expectation: verb,
// resource and name always, every other field when the expectation lists
// it, within event, condition and http the listed subfields, and, when
// partial, object and patch as a subset (subset).
func matches(set fieldSet, exp, actual Fields, partial bool) bool {
	if !sameTarget(set, exp, actual) {
		return false
	}
	for _, f := range exp {
		if slices.Contains(set.always, f.Key) {
			continue
		}
		if sub, ok := f.Value.(Fields); ok {
			have, _ := actual.get(f.Key).(Fields)
			for _, sf := range sub {
				if !equal(sf.Value, have.get(sf.Key)) {
					return false
				}
			}
			continue
		}
		if partial && slices.Contains(partialKeys, f.Key) {
			if !subset(normalize(f.Value), normalize(actual.get(f.Key))) {
				return false
			}
			continue
		}
		if !equal(f.Value, actual.get(f.Key)) {
			return false
		}
	}
	return true
}

// subset reports whether have (JSON data, normalized) holds want: every
// key of a map in want is in have with a value that holds want's; lists
// have the same length and hold want's elements in order; anything else
// is equal.
func subset(want, have any) bool {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return false
		}
		for k, wv := range w {
			hv, ok := h[k]
			if !ok || !subset(wv, hv) {
				return false
			}
		}
		return true
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return false
		}
		for i := range w {
			if !subset(w[i], h[i]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(want, have)
}

// prune keeps of have (JSON data, normalized) what want lists, so that the
// diff of a partial expectation shows only the keys it compares.
func prune(want, have any) any {
	switch w := want.(type) {
	case map[string]any:
		h, ok := have.(map[string]any)
		if !ok {
			return have
		}
		out := make(map[string]any, len(w))
		for k, wv := range w {
			if hv, ok := h[k]; ok {
				out[k] = prune(wv, hv)
			}
		}
		return out
	case []any:
		h, ok := have.([]any)
		if !ok || len(h) != len(w) {
			return have
		}
		out := make([]any, len(h))
		for i := range h {
			out[i] = prune(w[i], h[i])
		}
		return out
	}
	return have
}

func equal(a, b any) bool {
	if _, ok := a.(string); ok {
		return a == b
	}
	return reflect.DeepEqual(normalize(a), normalize(b))
}

// project keeps the fields of actual that the expectation compares, so that
// a diff shows only what matters (for a partial expectation, only the keys
// of object and patch that it lists). A compared field actual lacks
// appears with its zero value.
func project(set fieldSet, exp, actual Fields, partial bool) Fields {
	var out Fields
	for _, key := range set.order {
		ev, listed := exp.Get(key)
		av, has := actual.Get(key)
		switch {
		case listed:
			if sub, ok := ev.(Fields); ok {
				have, _ := av.(Fields)
				var inner Fields
				for _, sf := range sub {
					inner = append(inner, Field{sf.Key, have.get(sf.Key)})
				}
				av = inner
			} else if !has {
				av = zero(key)
			} else if partial && slices.Contains(partialKeys, key) {
				av = prune(normalize(ev), normalize(av))
			}
			out = append(out, Field{key, av})
		case has && slices.Contains(set.always, key):
			out = append(out, Field{key, av})
		}
	}
	return out
}

// sameTarget reports whether the expectation and the action agree on
// the fields always compared.
func sameTarget(set fieldSet, exp, actual Fields) bool {
	for _, key := range set.always {
		if !equal(exp.get(key), actual.get(key)) {
			return false
		}
	}
	return true
}

// compareActions compares the actions one by one, in order, or, with
// ignoreOthers, looks for each expected action in order among the actual
// ones, skipping those that match none. It returns "" when they match, and
// otherwise a line diff of the expected and actual actions as YAML (actual
// actions reduced to the fields compared; with ignoreOthers, an action no
// expectation took to the fields of one about the same object, or to its
// verb, resource and name).
func compareActions(exp []ExpectedAction, actual []Fields, ignoreOthers bool) string {
	return compareIn(actionSet, exp, actual, ignoreOthers)
}

// compareIn is compareActions for lists of other fields (admission
// answers).
func compareIn(set fieldSet, exp []ExpectedAction, actual []Fields, ignoreOthers bool) string {
	// paired[i] is the expectation actual[i] is compared with, or -1.
	paired := make([]int, len(actual))
	ok := true
	if ignoreOthers {
		for i := range paired {
			paired[i] = -1
		}
		next := 0
		for j := range exp {
			i := next
			for i < len(actual) && !matches(set, exp[j].Fields, actual[i], exp[j].Partial) {
				i++
			}
			if i == len(actual) {
				ok = false
				break
			}
			paired[i], next = j, i+1
		}
	} else {
		ok = len(exp) == len(actual)
		for i := range paired {
			paired[i] = -1
			if i < len(exp) {
				paired[i] = i
				ok = ok && matches(set, exp[i].Fields, actual[i], exp[i].Partial)
			}
		}
	}
	if ok {
		return ""
	}
	want := make([]Fields, len(exp))
	got := make([]Fields, len(actual))
	for i := range exp {
		want[i] = exp[i].Fields
	}
	for i := range actual {
		switch j := paired[i]; {
		case j >= 0:
			got[i] = project(set, exp[j].Fields, actual[i], exp[j].Partial)
		case ignoreOthers:
			// Shown with the fields of an expectation about the same
			// object, which it may have been meant to meet.
			j := slices.IndexFunc(exp, func(e ExpectedAction) bool { return sameTarget(set, e.Fields, actual[i]) })
			if j < 0 {
				got[i] = project(set, nil, actual[i], false)
			} else {
				got[i] = project(set, exp[j].Fields, actual[i], exp[j].Partial)
			}
		default:
			got[i] = actual[i]
		}
	}
	return linediff.Marked(renderYAML(want), renderYAML(got))
}

// renderYAML prints a list of actions as YAML, fields in canonical order.
func renderYAML(list []Fields) string {
	if len(list) == 0 {
		return "[]\n"
	}
	seq := &yaml.Node{Kind: yaml.SequenceNode}
	for _, fs := range list {
		seq.Content = append(seq.Content, fieldsNode(fs))
	}
	return encodeNode(seq)
}

func encodeNode(n *yaml.Node) string {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return fmt.Sprintf("<cannot print: %v>\n", err)
	}
	_ = enc.Close()
	return b.String()
}

// fieldsNode builds the YAML mapping of fs, keeping its order.
func fieldsNode(fs Fields) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode}
	for _, f := range fs {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: f.Key}, valueNode(f.Value))
	}
	return m
}

func valueNode(v any) *yaml.Node {
	if fs, ok := v.(Fields); ok {
		return fieldsNode(fs)
	}
	var n yaml.Node
	if err := n.Encode(v); err != nil {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: fmt.Sprint(v)}
	}
	return &n
}
