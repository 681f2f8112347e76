package event

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
)

// changedDepth is how many path segments ChangedPaths descends into maps
// before it reports a whole subtree as changed.
const changedDepth = 3

// alwaysIgnored are paths that change on every write without meaning
// anything to a rule, and metadata.generation, which the API server moves
// only with a change of the object's other fields: that change is
// reported, or ignored, for itself. A condition written into an object
// without a status subresource changes status and the generation; a rule
// that ignores status must not be called for it.
var alwaysIgnored = []string{"metadata.resourceVersion", "metadata.managedFields", "metadata.generation"}

// ChangedPaths lists, sorted, the paths that differ between two versions of
// an object: "spec.replicas", "metadata.labels.app", "data.key". It descends
// into maps up to three segments deep and reports deeper changes, and
// changed lists, at that depth. Keys that are not identifiers are written in
// brackets: metadata.labels["app.kubernetes.io/name"].
//
// metadata.resourceVersion, metadata.managedFields, metadata.generation and every path equal to
// or under a prefix in ignore (e.g. "status", "metadata.annotations") are
// left out. Numbers compare by value, so int64(1) equals float64(1). An empty
// result means nothing that matters changed: onUpdate need not run.
//
// ChangedPaths does not modify its arguments and is safe for concurrent use.
func ChangedPaths(oldObj, newObj map[string]any, ignore []string) []string {
	d := differ{ignore: ignore, buf: make([]byte, 0, 64)}
	d.maps(oldObj, newObj)
	slices.Sort(d.out)
	return d.out
}

type differ struct {
	ignore []string
	// buf is the path being compared, formatted as formatPath does,
	// grown and cut back step by step: the path is made a string only
	// when it is reported, not for every key compared.
	buf   []byte
	depth int
	out   []string
}

func (d *differ) ignored() bool {
	return slices.ContainsFunc(alwaysIgnored, d.under) || slices.ContainsFunc(d.ignore, d.under)
}

// under reports whether d's path is prefix or lies under it.
func (d *differ) under(prefix string) bool {
	if len(d.buf) < len(prefix) || string(d.buf[:len(prefix)]) != prefix {
		return false
	}
	if len(d.buf) == len(prefix) {
		return true
	}
	c := d.buf[len(prefix)]
	return c == '.' || c == '['
}

// ignoresBelow reports whether some ignored path lies strictly under d's
// path, so that its subtree cannot be compared as a whole.
func (d *differ) ignoresBelow() bool {
	below := func(pre string) bool {
		if len(pre) <= len(d.buf) || pre[:len(d.buf)] != string(d.buf) {
			return false
		}
		c := pre[len(d.buf)]
		return c == '.' || c == '['
	}
	return slices.ContainsFunc(alwaysIgnored, below) || slices.ContainsFunc(d.ignore, below)
}

// maps compares two maps at d's path and records what differs. The
// order of the keys does not matter: ChangedPaths sorts what it reports.
func (d *differ) maps(a, b map[string]any) {
	for k, va := range a {
		vb, okB := b[k]
		d.key(k, va, true, vb, okB)
	}
	for k, vb := range b {
		if _, okA := a[k]; !okA {
			d.key(k, nil, false, vb, true)
		}
	}
}

// key compares the values of key k below d's path.
func (d *differ) key(k string, va any, okA bool, vb any, okB bool) {
	n := len(d.buf)
	d.buf = AppendKey(d.buf, k)
	d.depth++
	defer func() { d.buf, d.depth = d.buf[:n], d.depth-1 }()
	if d.ignored() {
		return
	}
	ma, isMapA := va.(map[string]any)
	mb, isMapB := vb.(map[string]any)
	if okA != okB && (isMapA || isMapB) && d.ignoresBelow() {
		// A map that one side lacks, with an ignored path below it,
		// compares as an empty map: only what it holds outside that
		// path is a change, so that kreact.once's marker, written on
		// an object with no annotations yet, is not one.
		okA, okB, isMapA, isMapB = true, true, true, true
	}
	switch {
	case okA != okB:
		d.out = append(d.out, string(d.buf))
	case isMapA && isMapB && d.depth < changedDepth:
		d.maps(ma, mb)
	case isMapA && isMapB && d.ignoresBelow():
		// Over the depth limit, but an ignored path lies below:
		// compare the subtree minus that path.
		sub := differ{ignore: d.ignore, buf: slices.Clone(d.buf), depth: d.depth}
		sub.maps(ma, mb)
		if len(sub.out) > 0 {
			d.out = append(d.out, string(d.buf))
		}
	case !jsonEqual(va, vb):
		d.out = append(d.out, string(d.buf))
	}
}

// AppendKey appends map key k to a path as a script writes it, which is
// how ChangedPaths reports paths and how package scripting names the
// paths of its errors: .name after another step, name first, and
// ["app.kubernetes.io/name"] for a key that is not an identifier.
func AppendKey(buf []byte, k string) []byte {
	if isIdentifier(k) {
		if len(buf) > 0 {
			buf = append(buf, '.')
		}
		return append(buf, k...)
	}
	buf = append(buf, '[')
	buf = strconv.AppendQuote(buf, k)
	return append(buf, ']')
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

// isIdentifier reports whether s can follow a dot in a script: ASCII
// letters, digits, _ and $, not starting with a digit.
func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		ch := s[i]
		switch {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch == '_', ch == '$':
		case ch >= '0' && ch <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}
