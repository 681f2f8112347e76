package projection

import (
	"slices"
	"strconv"
	"strings"
)

// Path is a field path, one map key per element: {"spec", "replicas"}.
type Path []string

// String formats p as spec.watch[].fields and spec.ignoreChanges write
// it: keys that are not plain names in brackets and quotes,
// `metadata.annotations["example.com/x"]`.
func (p Path) String() string {
	var b strings.Builder
	for i, k := range p {
		if plainName(k) {
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(k)
			continue
		}
		b.WriteByte('[')
		b.WriteString(strconv.Quote(k))
		b.WriteByte(']')
	}
	return b.String()
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// under reports whether p is at or below q (q is a prefix of p).
func (p Path) under(q Path) bool {
	return len(p) >= len(q) && slices.Equal(p[:len(q)], q)
}

// Identity lists what every projection keeps: what names an object, what
// selects it (labels), what kreact's own bookkeeping reads (annotations,
// finalizers, deletionTimestamp) and what garbage collection and adoption
// read (ownerReferences).
var Identity = []Path{
	{"apiVersion"},
	{"kind"},
	{"metadata", "name"},
	{"metadata", "namespace"},
	{"metadata", "uid"},
	{"metadata", "resourceVersion"},
	{"metadata", "labels"},
	{"metadata", "annotations"},
	{"metadata", "ownerReferences"},
	{"metadata", "deletionTimestamp"},
	{"metadata", "finalizers"},
}

// Fields is the set of paths a projection keeps besides Identity. The
// zero value keeps whole objects. Fields values are immutable.
type Fields struct {
	set   bool
	paths []Path
	// kept is what Apply keeps, as a tree; nil for Whole.
	kept *Node
}

// Node is what a projection keeps of a map: the whole value of the
// keys whose Node is Whole, and of the others, if their value is a map,
// that map cut down to their Node (a map, empty perhaps: the way to a
// kept path is kept even where the path ends early). A value that is not
// a map where the Node goes on is dropped.
type Node struct {
	Whole bool
	Keys  map[string]*Node
}

var wholeNode = &Node{Whole: true}

// tree returns the Node of the object: Identity and paths.
func tree(paths []Path) *Node {
	root := &Node{Keys: map[string]*Node{}}
	for _, p := range append(slices.Clip(Identity), paths...) {
		n := root
		for i, k := range p {
			if i == len(p)-1 {
				n.Keys[k] = wholeNode
				break
			}
			next := n.Keys[k]
			if next != nil && next.Whole {
				break // kept whole already (New leaves no such path)
			}
			if next == nil {
				next = &Node{Keys: map[string]*Node{}}
				n.Keys[k] = next
			}
			n = next
		}
	}
	return root
}

// New returns the projection that keeps paths (and Identity). New() with
// no paths keeps Identity only. Empty paths, and paths Identity keeps
// anyway, are left out.
func New(paths ...Path) Fields {
	f := Fields{set: true}
	sorted := make([]Path, 0, len(paths))
	for _, p := range paths {
		if len(p) > 0 && !underIdentity(p) {
			sorted = append(sorted, slices.Clone(p))
		}
	}
	slices.SortFunc(sorted, func(a, b Path) int { return slices.Compare(a, b) })
	for _, p := range sorted {
		// Sorted, a path comes right after its prefixes: comparing with
		// the last kept one is enough.
		if n := len(f.paths); n > 0 && p.under(f.paths[n-1]) {
			continue
		}
		f.paths = append(f.paths, p)
	}
	f.kept = tree(f.paths)
	return f
}

func underIdentity(p Path) bool {
	for _, q := range Identity {
		if p.under(q) {
			return true
		}
	}
	return false
}

// Whole reports whether f keeps whole objects.
func (f Fields) Whole() bool { return !f.set }

// Paths returns the paths f keeps besides Identity, sorted; nil for Whole.
func (f Fields) Paths() []Path { return slices.Clone(f.paths) }

// String returns the canonical form: "*" for whole objects, else the
// paths separated by commas ("" for Identity only).
func (f Fields) String() string {
	if f.Whole() {
		return "*"
	}
	s := make([]string, len(f.paths))
	for i, p := range f.paths {
		s[i] = p.String()
	}
	return strings.Join(s, ",")
}

// Equal reports whether f and o keep the same paths.
func (f Fields) Equal(o Fields) bool {
	return f.set == o.set && slices.EqualFunc(f.paths, o.paths, func(a, b Path) bool { return slices.Equal(a, b) })
}

// Union returns the projection that keeps what f or o keeps.
func (f Fields) Union(o Fields) Fields {
	if f.Whole() || o.Whole() {
		return Fields{}
	}
	return New(append(slices.Clone(f.paths), o.paths...)...)
}

// Covers reports whether f keeps everything o keeps.
func (f Fields) Covers(o Fields) bool {
	if f.Whole() {
		return true
	}
	if o.Whole() {
		return false
	}
	for _, p := range o.paths {
		if !f.Keeps(p) {
			return false
		}
	}
	return true
}

// Keeps reports whether the value at p survives Apply whole: p is at or
// below a kept path or an Identity path.
func (f Fields) Keeps(p Path) bool {
	if f.Whole() {
		return true
	}
	n := f.walk(p)
	return n != nil && n.Whole
}

// Reaches reports whether Apply keeps p or something below it, so that
// the value at p is there, perhaps cut down: with spec.replicas kept,
// Reaches(spec) is true and Keeps(spec) false.
func (f Fields) Reaches(p Path) bool { return f.Whole() || f.walk(p) != nil }

// walk follows p down Kept, which f must have: it returns the Node at p,
// the first whole Node on the way (what is below it is kept too), or nil
// where the tree ends short of p.
func (f Fields) walk(p Path) *Node {
	n := f.kept
	for _, k := range p {
		if n == nil || n.Whole {
			return n
		}
		n = n.Keys[k]
	}
	return n
}

// MetadataOnly reports whether f keeps nothing outside metadata, so that
// the server's metadata-only answers (PartialObjectMetadata) carry all of
// it.
func (f Fields) MetadataOnly() bool {
	if f.Whole() {
		return false
	}
	for _, p := range f.paths {
		if p[0] != "metadata" {
			return false
		}
	}
	return true
}

// Kept returns what f keeps of an object, as a tree; nil for Whole. It
// must not be changed.
func (f Fields) Kept() *Node { return f.kept }

// Apply returns obj cut down to f. It returns obj itself for Whole, and
// nil for nil. The maps of the result are new, its other values obj's.
func (f Fields) Apply(obj map[string]any) map[string]any {
	if f.Whole() || obj == nil {
		return obj
	}
	return f.kept.apply(obj)
}

func (n *Node) apply(m map[string]any) map[string]any {
	out := make(map[string]any, len(n.Keys))
	for k, kid := range n.Keys {
		v, ok := m[k]
		switch {
		case !ok:
		case kid.Whole:
			out[k] = v
		default:
			if sub, ok := v.(map[string]any); ok {
				out[k] = kid.apply(sub)
			}
		}
	}
	return out
}
