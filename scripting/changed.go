package scripting

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
)

// changedDepth is how many path segments ChangedPaths descends into maps
// before it reports a whole subtree as changed.
const changedDepth = 3

// alwaysIgnored are paths that change on every write without meaning
// anything to a rule.
var alwaysIgnored = []string{"metadata.resourceVersion", "metadata.managedFields"}

// ChangedPaths lists, sorted, the paths that differ between two versions of
// an object: "spec.replicas", "metadata.labels.app", "data.key". It descends
// into maps up to three segments deep and reports deeper changes, and
// changed lists, at that depth. Keys that are not identifiers are written in
// brackets: metadata.labels["app.kubernetes.io/name"].
//
// metadata.resourceVersion, metadata.managedFields and every path equal to
// or under a prefix in ignore (e.g. "status", "metadata.annotations") are
// left out. Numbers compare by value, so int64(1) equals float64(1). An empty
// result means nothing that matters changed: onUpdate need not run.
//
// ChangedPaths does not modify its arguments and is safe for concurrent use.
func ChangedPaths(oldObj, newObj map[string]any, ignore []string) []string {
	d := differ{ignore: ignore}
	d.maps(oldObj, newObj)
	slices.Sort(d.out)
	return d.out
}

type differ struct {
	ignore []string
	path   []pathStep
	out    []string
}

func (d *differ) ignored(p string) bool {
	return slices.ContainsFunc(alwaysIgnored, func(pre string) bool { return hasPathPrefix(p, pre) }) ||
		slices.ContainsFunc(d.ignore, func(pre string) bool { return hasPathPrefix(p, pre) })
}

// ignoresBelow reports whether some ignored path lies strictly under p, so
// that p's subtree cannot be compared as a whole.
func (d *differ) ignoresBelow(p string) bool {
	below := func(pre string) bool { return pre != p && hasPathPrefix(pre, p) }
	return slices.ContainsFunc(alwaysIgnored, below) || slices.ContainsFunc(d.ignore, below)
}

// hasPathPrefix reports whether path is prefix or lies under it.
func hasPathPrefix(path, prefix string) bool {
	if !strings.HasPrefix(path, prefix) {
		return false
	}
	if len(path) == len(prefix) {
		return true
	}
	c := path[len(prefix)]
	return c == '.' || c == '['
}

// maps compares two maps at d.path and records what differs.
func (d *differ) maps(a, b map[string]any) {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	for _, k := range keys {
		d.path = append(d.path, keyStep(k))
		p := formatPath(d.path)
		if !d.ignored(p) {
			va, okA := a[k]
			vb, okB := b[k]
			ma, isMapA := va.(map[string]any)
			mb, isMapB := vb.(map[string]any)
			switch {
			case okA != okB:
				d.out = append(d.out, p)
			case isMapA && isMapB && len(d.path) < changedDepth:
				d.maps(ma, mb)
			case isMapA && isMapB && d.ignoresBelow(p):
				// Over the depth limit, but an ignored path lies below:
				// compare the subtree minus that path.
				sub := differ{ignore: d.ignore, path: slices.Clone(d.path)}
				sub.maps(ma, mb)
				if len(sub.out) > 0 {
					d.out = append(d.out, p)
				}
			case !jsonEqual(va, vb):
				d.out = append(d.out, p)
			}
		}
		d.path = d.path[:len(d.path)-1]
	}
}

// jsonEqual compares JSON data, numbers by value.
func jsonEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for k, va := range a {
			vb, ok := b[k]
			if !ok || !jsonEqual(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !jsonEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	case string:
		b, ok := b.(string)
		return ok && a == b
	case bool:
		b, ok := b.(bool)
		return ok && a == b
	case nil:
		return b == nil
	}
	if ia, ok := a.(int64); ok {
		if ib, ok := b.(int64); ok {
			return ia == ib
		}
	}
	fa, okA := number(a)
	fb, okB := number(b)
	if okA && okB {
		return fa == fb
	}
	return false
}

// number returns a JSON number as a float64, to compare an int64 with a
// float64 (two int64 are compared exactly by jsonEqual).
func number(x any) (float64, bool) {
	switch x := x.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}
