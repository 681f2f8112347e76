package delivery

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kreact/kreact/internal/editdistance"
	"github.com/kreact/kreact/rules"
)

// WatchMatch says whether one spec.watch entry of a rule takes an
// object, and why not.
type WatchMatch struct {
	// Entry is the index of the spec.watch entry; -1 when no entry
	// watches the object's resource.
	Entry int `json:"entry"`
	// Watched is true when the entry's informer holds the object: its
	// changes reach the rule (which still decides what to call; see the
	// Core's trace).
	Watched bool `json:"watched"`
	// Reasons say why not: each names what excludes the object, where
	// it is written, and a fix.
	Reasons []string `json:"reasons,omitempty"`
}

// Watches says, for each spec.watch entry of res, whether it takes obj,
// an object of resource gr: one WatchMatch per entry of that resource,
// or one with Entry -1 when the rule does not watch gr. It is what an
// informer would decide (namespaces, label and field selectors); a
// sharded kreact run also leaves out the objects of other replicas,
// which is not told here.
func Watches(res *rules.Resolved, gr schema.GroupResource, obj *unstructured.Unstructured) []WatchMatch {
	var out []WatchMatch
	var watched []string
	for i, rw := range res.Watch {
		watched = append(watched, rw.Resource.GVR.GroupResource().String())
		if rw.Resource.GVR.GroupResource() != gr {
			continue
		}
		m := WatchMatch{Entry: i}
		m.Reasons = whyNotWatched(rw.Watch, fmt.Sprintf("spec.watch[%d]", i), obj)
		m.Watched = len(m.Reasons) == 0
		out = append(out, m)
	}
	if out == nil {
		slices.Sort(watched)
		out = append(out, WatchMatch{Entry: -1, Reasons: []string{fmt.Sprintf("the rule does not watch %s: spec.watch (%s) lists %s", gr, res.Rule.Pos, strings.Join(slices.Compact(watched), ", "))}})
	}
	return out
}

// whyNotWatched lists what in watch entry w (at path) leaves obj out.
func whyNotWatched(w rules.Watch, path string, obj *unstructured.Unstructured) []string {
	var out []string
	if ns := obj.GetNamespace(); len(w.Namespaces) > 0 && !slices.Contains(w.Namespaces, ns) {
		why := fmt.Sprintf("namespace %q is not in %s.namespaces %v (%s)", ns, path, w.Namespaces, w.NamespacesPos)
		if near := nearest(ns, w.Namespaces); near != "" {
			why += fmt.Sprintf("; %q looks like a misspelling of it: write %q there", near, ns)
		} else {
			why += fmt.Sprintf("; add %q there to watch it", ns)
		}
		out = append(out, why)
	}
	if w.LabelSelector != "" {
		if sel, err := labels.Parse(w.LabelSelector); err == nil && !sel.Matches(labels.Set(obj.GetLabels())) {
			out = append(out, labelMismatch(sel, w, path, obj.GetLabels()))
		}
	}
	if w.FieldSelector != "" {
		if sel, err := fields.ParseSelector(w.FieldSelector); err == nil {
			set := fields.Set{}
			for _, req := range sel.Requirements() {
				if v, ok := FieldValue(obj.Object, req.Field); ok {
					set[req.Field] = v
				}
			}
			if !sel.Matches(set) {
				out = append(out, fmt.Sprintf("field selector %q of %s.fieldSelector (%s) does not match the object (%s)", w.FieldSelector, path, w.FieldSelectorPos, describeFields(sel, set)))
			}
		}
	}
	return out
}

// labelMismatch says which requirements of sel the labels fail, and how
// to fix them.
func labelMismatch(sel labels.Selector, w rules.Watch, path string, have map[string]string) string {
	reqs, _ := sel.Requirements()
	var failed, hints []string
	for _, r := range reqs {
		if r.Matches(labels.Set(have)) {
			continue
		}
		failed = append(failed, r.String())
		v, ok := have[r.Key()]
		switch {
		case !ok:
			for k := range have {
				if strings.EqualFold(k, r.Key()) || nearest(k, []string{r.Key()}) != "" {
					hints = append(hints, fmt.Sprintf("the object has label %s=%s, not %s", k, have[k], r.Key()))
				}
			}
		case r.Operator() == selection.Equals || r.Operator() == selection.DoubleEquals || r.Operator() == selection.In:
			for _, want := range r.ValuesUnsorted() {
				if strings.EqualFold(want, v) {
					hints = append(hints, fmt.Sprintf("label values are case-sensitive: the object has %s=%s, the selector wants %s=%s", r.Key(), v, r.Key(), want))
				}
			}
		}
	}
	slices.Sort(hints)
	shown := labels.Set(have).String()
	if shown == "" {
		shown = "(none)"
	}
	why := fmt.Sprintf("label selector %q of %s.labelSelector (%s) does not match the object's labels %s: %s fails", w.LabelSelector, path, w.LabelSelectorPos, shown, strings.Join(failed, ", "))
	if len(hints) > 0 {
		why += "; " + strings.Join(slices.Compact(hints), "; ")
	}
	return why + "; fix the selector or the object's labels"
}

// describeFields prints the values a field selector was matched against.
func describeFields(sel fields.Selector, set fields.Set) string {
	var parts []string
	for _, r := range sel.Requirements() {
		if v, ok := set[r.Field]; ok {
			parts = append(parts, r.Field+"="+v)
		} else {
			parts = append(parts, r.Field+" is not set")
		}
	}
	return strings.Join(parts, ", ")
}

// nearest returns the candidate that s is likely a misspelling of: equal
// but for case or dashes, or at most two edits away; "" for none.
func nearest(s string, candidates []string) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "")) }
	best, bestDist := "", 3
	for _, c := range candidates {
		if c == s {
			continue
		}
		if norm(c) == norm(s) {
			return c
		}
		if d := editdistance.AtMost(s, c, 2); d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

// FieldValue returns the value at a dotted path as a field selector sees
// it: strings as they are, numbers and booleans printed.
func FieldValue(obj map[string]any, path string) (string, bool) {
	var cur any = obj
	for part := range strings.SplitSeq(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return "", false
		}
		if cur, ok = m[part]; !ok {
			return "", false
		}
	}
	switch v := cur.(type) {
	case string:
		return v, true
	case bool, int64, float64, int:
		return fmt.Sprint(v), true
	}
	return "", false
}
