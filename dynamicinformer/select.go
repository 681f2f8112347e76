package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/tools/cache"
)

// selects reports whether sel selects obj, a cached object (compact or
// not, or a DeletedFinalStateUnknown holding one): the one test of a
// Watch's label selector, for its handler's events (see
// Watch.registeredHandler) and for the reads made through it (Get, List).
// It is labels.Selector.Matches, the API server's own test, on the
// object's metadata.labels, which every projection keeps (projection's
// Identity): an informer selecting locally caches nothing more for it.
func selects(sel labels.Selector, obj any) bool {
	if sel.Empty() {
		return true
	}
	if tomb, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = tomb.Obj
	}
	switch o := obj.(type) {
	case *compactObject:
		return sel.Matches(o.labels())
	case interface{ GetLabels() map[string]string }:
		return sel.Matches(labels.Set(o.GetLabels()))
	}
	return false
}

// compactLabels is the metadata.labels map of a compactObject, still
// encoded (its 'm' tag first; "" when the object has no labels). It is
// labels.Labels without decoding the object: a selector reads a label or
// two of an object that each Watch of a shared informer tests at every
// event, and decoding the whole object for that would cost each of them
// a decode (BenchmarkCompact) per event.
type compactLabels string

var _ labels.Labels = compactLabels("")

// labels returns o's labels, still encoded.
func (o *compactObject) labels() compactLabels {
	d := decoder{s: o.data}
	if !d.field("metadata") || !d.field("labels") {
		return ""
	}
	start := d.off
	d.skip()
	if d.err != nil {
		return ""
	}
	return compactLabels(d.s[start:d.off])
}

// Lookup returns the value of label and whether the object has it.
func (l compactLabels) Lookup(label string) (string, bool) {
	d := decoder{s: string(l)}
	if !d.field(label) || d.off >= len(d.s) || d.s[d.off] != 's' {
		// Absent, or not a string: the API server admits none, and a
		// value that is not a string matches nothing.
		return "", false
	}
	d.off++
	return d.str(), true
}

// Has reports whether the object has label.
func (l compactLabels) Has(label string) bool {
	_, ok := l.Lookup(label)
	return ok
}

// Get returns the value of label, "" if the object has none.
func (l compactLabels) Get(label string) string {
	v, _ := l.Lookup(label)
	return v
}

// field moves d to the value of key in the map at d.off, and reports
// whether there is one: false, with d anywhere, when the value at d.off
// is not a map or has no key.
func (d *decoder) field(key string) bool {
	if d.off >= len(d.s) || d.s[d.off] != 'm' {
		return false
	}
	d.off++
	for n := d.count(); n > 0 && d.err == nil; n-- {
		if d.key() == key {
			return d.err == nil
		}
		d.skip()
	}
	return false
}
