package yamlnode

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/editdistance"
)

// Decoder reports the problems of one file's nodes. It never fails: a
// value with a problem is reported and left out, and the caller goes on.
type Decoder struct {
	// File names the file in positions.
	File string
	// Errs collects the problems; it must not be nil.
	Errs *diag.ErrorList
	// Hint, if not nil, explains an unknown field name that is no known
	// field misspelt, such as a field written at the wrong level; it
	// returns "" or " (hint)". Nil means no such hints.
	Hint func(path, name string) string
}

// Pos returns the position of n in the file; the file alone for nil.
func (d *Decoder) Pos(n *yaml.Node) diag.Position {
	if n == nil {
		return diag.Position{File: d.File}
	}
	return diag.Position{File: d.File, Line: n.Line, Col: n.Column}
}

// Errorf reports a problem at n; the message is formatted by
// diag.Sprintf, which shortens what it quotes.
func (d *Decoder) Errorf(n *yaml.Node, format string, args ...any) {
	d.Errs.Add(d.Pos(n), diag.Sprintf(format, args...))
}

// Entry is one key: value pair of a mapping.
type Entry struct {
	Key, Value *yaml.Node
}

// Present reports whether the field was written with a non-null value.
func (e Entry) Present() bool { return e.Key != nil && !IsNull(e.Value) }

// Join returns the path of field key of the object at path.
func Join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// Index returns the path of item i of the list at path.
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Deref follows aliases to the node they stand for.
func Deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or an explicit null.
func IsNull(n *yaml.Node) bool {
	n = Deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// Describe names what a node is, for "expected X, got Y" messages.
func Describe(n *yaml.Node) string {
	n = Deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind != yaml.ScalarNode:
		return "a YAML document"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!str":
		return "string " + strconv.Quote(v)
	case "!!int":
		return "integer " + v
	case "!!float":
		return "number " + v
	case "!!bool":
		return "boolean " + v
	}
	return n.ShortTag() + " " + strconv.Quote(v)
}

// Mapping returns the entries of the mapping n, reporting duplicate keys,
// keys that are not field names, and, unless known is nil, keys that are
// not in known.
func (d *Decoder) Mapping(n *yaml.Node, path string, known []string) map[string]Entry {
	m := make(map[string]Entry, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" {
			if k.ShortTag() == "!!merge" {
				d.Errorf(k, "%s: merge keys (<<) are not supported", orRoot(path))
			} else {
				d.Errorf(k, "%s: keys must be field names, got %s", orRoot(path), Describe(k))
			}
			continue
		}
		if prev, dup := m[name]; dup {
			d.Errorf(k, "duplicate field %q (first at %s)", Join(path, name), d.Pos(prev.Key).LineCol())
			continue
		}
		if known != nil && !slices.Contains(known, name) {
			hint := Suggest(name, known)
			if hint == "" && len(known) <= 4 && path != "" {
				hint = fmt.Sprintf(" (%s has only %s)", path, strings.Join(known, ", "))
			}
			if hint == "" && d.Hint != nil {
				hint = d.Hint(path, name)
			}
			d.Errorf(k, "unknown field %q%s", Join(path, name), hint)
			continue
		}
		m[name] = Entry{Key: k, Value: v}
	}
	return m
}

func orRoot(path string) string {
	if path == "" {
		return "document"
	}
	return path
}

// Suggest returns ` (did you mean "x"?)` for the known word closest to
// word, or "" when none is close.
func Suggest(word string, known []string) string {
	best, bestDist := "", 3
	lower := strings.ToLower(word)
	for _, k := range known {
		if strings.EqualFold(k, word) {
			return fmt.Sprintf(" (did you mean %q?)", k)
		}
		// AtMost: a key a user wrote may be a megabyte long.
		if dist := editdistance.AtMost(lower, strings.ToLower(k), bestDist-1); dist < bestDist && dist < len(k)/2+1 {
			best, bestDist = k, dist
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// Lookup returns the first entry of the mapping n with the given key.
func Lookup(n *yaml.Node, key string) Entry {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if k := n.Content[i]; k.Kind == yaml.ScalarNode && k.Value == key {
			return Entry{Key: k, Value: n.Content[i+1]}
		}
	}
	return Entry{}
}

// Object returns the entries of n, which must be a mapping; anything else
// is reported and returns nil. See Mapping.
func (d *Decoder) Object(n *yaml.Node, path string, known []string) map[string]Entry {
	m := Deref(n)
	if m == nil || m.Kind != yaml.MappingNode {
		d.Errorf(n, "%s: expected a mapping, got %s", orRoot(path), Describe(m))
		return nil
	}
	return d.Mapping(m, path, known)
}

// List returns the items of the list n; ok is false when n is absent,
// null or not a list (which is reported).
func (d *Decoder) List(n *yaml.Node, path string) (items []*yaml.Node, ok bool) {
	if IsNull(n) {
		return nil, false
	}
	l := Deref(n)
	if l.Kind != yaml.SequenceNode {
		d.Errorf(n, "%s: expected a list, got %s", path, Describe(l))
		return nil, false
	}
	return l.Content, true
}

// Str returns the string value of n; ok is false (and an error reported)
// when n is not a string. Numbers and booleans are not strings: YAML users
// quote them ("2024"), as kubectl requires.
func (d *Decoder) Str(n *yaml.Node, path string) (string, bool) {
	v := Deref(n)
	if v == nil || v.Kind != yaml.ScalarNode || v.ShortTag() != "!!str" {
		hint := ""
		if v != nil && v.Kind == yaml.ScalarNode && v.ShortTag() != "!!null" {
			hint = diag.Sprintf(" (quote it: %q)", v.Value)
		}
		d.Errorf(n, "%s: expected a string, got %s%s", path, Describe(v), hint)
		return "", false
	}
	return v.Value, true
}

// Bool returns the boolean value of n; ok is false (and an error
// reported) when n is not true or false.
func (d *Decoder) Bool(n *yaml.Node, path string) (v, ok bool) {
	b := Deref(n)
	if b == nil || b.Kind != yaml.ScalarNode || b.ShortTag() != "!!bool" || b.Decode(&v) != nil {
		d.Errorf(n, "%s: expected true or false, got %s", path, Describe(b))
		return false, false
	}
	return v, true
}
