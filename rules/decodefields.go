package rules

import (
	"math"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kreact/kreact/internal/governor"
	"github.com/kreact/kreact/internal/yamlnode"
)

// The decoders of the value types the format uses (lists of strings,
// bounded numbers, durations, amounts of memory), each with its checks.

// object returns the mapping of field e, or nil (with an error) when it is
// not a mapping. A null or absent field returns nil without an error.
func (d *decoder) object(e yamlnode.Entry, path string, known []string) map[string]yamlnode.Entry {
	if !e.Present() {
		return nil
	}
	return d.Object(e.Value, path, known)
}

// list returns the items of the list field e; ok is false when the field is
// absent, null or not a list (which is reported).
func (d *decoder) list(e yamlnode.Entry, path string) (items []*yaml.Node, ok bool) {
	return d.List(e.Value, path)
}

// nonEmpty is str that also rejects "" and blank strings.
func (d *decoder) nonEmpty(n *yaml.Node, path string) (string, bool) {
	s, ok := d.Str(n, path)
	if ok && strings.TrimSpace(s) == "" {
		d.Errorf(n, "%s: must not be empty", path)
		return "", false
	}
	return s, ok
}

// item is an accepted element of a list of strings: its value, node and
// index in the list.
type item struct {
	s string
	n *yaml.Node
	i int
}

// stringList decodes a list field of non-empty strings, reporting the
// elements that are not and duplicates.
func (d *decoder) stringList(e yamlnode.Entry, path string) []item {
	nodes, _ := d.list(e, path)
	return d.stringItems(nodes, path)
}

func (d *decoder) stringItems(nodes []*yaml.Node, path string) []item {
	var out []item
	// Duplicates are found with a map, not by scanning what came before:
	// a list of 40,000 entries took seconds to check.
	first := make(map[string]int, len(nodes))
	for i, n := range nodes {
		s, ok := d.nonEmpty(n, yamlnode.Index(path, i))
		if !ok {
			continue
		}
		if j, dup := first[s]; dup {
			d.Errorf(n, "%s: duplicate %q (first at %s)", yamlnode.Index(path, i), s, d.Pos(out[j].n).LineCol())
			continue
		}
		first[s] = len(out)
		out = append(out, item{s, n, i})
	}
	return out
}

// integer decodes an integer field within [lo, hi]; absent or null keeps
// def.
func (d *decoder) integer(e yamlnode.Entry, path string, def, lo, hi int) int {
	if !e.Present() {
		return def
	}
	n := yamlnode.Deref(e.Value)
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		d.Errorf(e.Value, "%s: expected an integer, got %s", path, yamlnode.Describe(n))
		return def
	}
	var v int64
	if err := n.Decode(&v); err != nil || v < int64(lo) || v > int64(hi) {
		d.Errorf(e.Value, "%s: must be between %d and %d, got %s", path, lo, hi, n.Value)
		return def
	}
	return int(v)
}

// number decodes a number field in (0, hi]; absent or null keeps def.
func (d *decoder) number(e yamlnode.Entry, path string, def, hi float64) float64 {
	if !e.Present() {
		return def
	}
	n := yamlnode.Deref(e.Value)
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!int" && n.ShortTag() != "!!float") {
		d.Errorf(e.Value, "%s: expected a number, got %s", path, yamlnode.Describe(n))
		return def
	}
	var v float64
	if err := n.Decode(&v); err != nil || math.IsNaN(v) || v <= 0 || v > hi {
		d.Errorf(e.Value, "%s: must be greater than 0 and at most %g, got %s", path, hi, n.Value)
		return def
	}
	return v
}

// boolean decodes a true/false field; absent or null keeps def.
func (d *decoder) boolean(e yamlnode.Entry, path string, def bool) bool {
	if !e.Present() {
		return def
	}
	if v, ok := d.Bool(e.Value, path); ok {
		return v
	}
	return def
}

// duration decodes a Go duration string ("500ms", "2s") in [lo, hi];
// absent or null keeps def.
func (d *decoder) duration(e yamlnode.Entry, path string, def, lo, hi time.Duration) time.Duration {
	if !e.Present() {
		return def
	}
	n := yamlnode.Deref(e.Value)
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		d.Errorf(e.Value, "%s: %s has no unit; write a duration such as \"500ms\", \"2s\" or \"1m\"", path, n.Value)
		return def
	}
	s, ok := d.Str(e.Value, path)
	if !ok {
		return def
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		d.Errorf(e.Value, "%s: %q is not a duration; write a number and a unit such as \"500ms\", \"2s\" or \"1m\"", path, s)
		return def
	}
	if v < lo || v > hi {
		d.Errorf(e.Value, "%s: must be between %v and %v, got %v", path, lo, hi, v)
		return def
	}
	return v
}

// bytes decodes an amount of memory written as a Kubernetes quantity
// ("64Mi", "1Gi") in [lo, hi]; absent or null keeps def.
func (d *decoder) bytes(e yamlnode.Entry, path string, def, lo, hi int64) int64 {
	if !e.Present() {
		return def
	}
	n := yamlnode.Deref(e.Value)
	if n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float") {
		d.Errorf(e.Value, "%s: %s has no unit; write an amount such as \"64Mi\" or \"1Gi\"", path, n.Value)
		return def
	}
	s, ok := d.Str(e.Value, path)
	if !ok {
		return def
	}
	q, err := resource.ParseQuantity(s)
	if err != nil {
		d.Errorf(e.Value, "%s: %q is not an amount of memory; write a number and a unit such as \"64Mi\" or \"1Gi\"", path, s)
		return def
	}
	if q.Cmp(*resource.NewQuantity(lo, resource.BinarySI)) < 0 || q.Cmp(*resource.NewQuantity(hi, resource.BinarySI)) > 0 {
		d.Errorf(e.Value, "%s: must be between %s and %s, got %s", path, governor.FormatBytes(lo), governor.FormatBytes(hi), s)
		return def
	}
	return q.Value()
}
