package ruletest

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/internal/editdistance"
	"github.com/kreact/kreact/source"
)

// decoder walks yaml.v3 node trees by hand, so that every problem has the
// position of the value it is about, and records problems instead of
// stopping at the first.
type decoder struct {
	file string
	errs *source.ErrorList
}

func (d *decoder) pos(n *yaml.Node) source.Position {
	if n == nil {
		return source.Position{File: d.file}
	}
	return source.Position{File: d.file, Line: n.Line, Col: n.Column}
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errs.Addf(d.pos(n), format, args...)
}

// isNull reports whether n is absent or an explicit null.
func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// describe names the YAML type of n for messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	}
	switch n.Tag {
	case "!!str":
		return fmt.Sprintf("the string %q", n.Value)
	case "!!int", "!!float":
		return "the number " + n.Value
	case "!!bool":
		return "the boolean " + n.Value
	case "!!null":
		return "null"
	}
	return fmt.Sprintf("%s %s", n.Tag, n.Value)
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// fields checks that n is a mapping whose keys are all in known and
// returns its values by key. Unknown and duplicate keys are reported; nil is
// returned when n is not a mapping.
func (d *decoder) fields(n *yaml.Node, path string, known ...string) map[string]*yaml.Node {
	n = deref(n)
	if n == nil || n.Kind != yaml.MappingNode {
		what := path
		if what == "" {
			what = "the document"
		}
		d.errorf(n, "%s: want a mapping, not %s", what, describe(n))
		return nil
	}
	out := make(map[string]*yaml.Node, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "%s: keys must be strings", path)
			continue
		}
		if !slices.Contains(known, k.Value) {
			d.errorf(k, "unknown field %q%s", join(path, k.Value), suggest(k.Value, known))
			continue
		}
		if _, dup := out[k.Value]; dup {
			d.errorf(k, "duplicate field %q", join(path, k.Value))
			continue
		}
		out[k.Value] = v
	}
	return out
}

// str returns the string n holds; anything else is reported.
func (d *decoder) str(n *yaml.Node, path string) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!str" {
		d.errorf(n, "%s: want a string, not %s", path, describe(n))
		return "", false
	}
	return n.Value, true
}

// boolean returns the boolean n holds; anything else is reported.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errorf(n, "%s: want true or false, not %s", path, describe(n))
		return false
	}
	b, _ := strconv.ParseBool(strings.ToLower(n.Value))
	return b
}

// list returns the items of the sequence n (none for null).
func (d *decoder) list(n *yaml.Node, path string) []*yaml.Node {
	if isNull(n) {
		return nil
	}
	n = deref(n)
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, "%s: want a list, not %s", path, describe(n))
		return nil
	}
	return n.Content
}

// strings returns a list of strings.
func (d *decoder) strings(n *yaml.Node, path string) ([]string, []*yaml.Node) {
	var out []string
	var nodes []*yaml.Node
	for i, item := range d.list(n, path) {
		if s, ok := d.str(item, index(path, i)); ok {
			out = append(out, s)
			nodes = append(nodes, item)
		}
	}
	return out, nodes
}

// value converts n to JSON data (map[string]any, []any, string, int64,
// float64, bool, nil), as the scripts and the API server see it. Unlike
// yaml.v3's own decoding into any, timestamps stay strings, integers are
// int64 and only string keys are accepted.
func (d *decoder) value(n *yaml.Node, path string) (any, bool) {
	v, err := jsonValue(n, 0)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			d.errorf(pe.n, "%s: %s", path, pe.msg)
		} else {
			d.errorf(n, "%s: %v", path, err)
		}
		return nil, false
	}
	return v, true
}

type posError struct {
	n   *yaml.Node
	msg string
}

func (e *posError) Error() string { return e.msg }

// maxDepth bounds nesting, and with it alias expansion.
const maxDepth = 100

func jsonValue(n *yaml.Node, depth int) (any, error) {
	if depth > maxDepth {
		return nil, &posError{n, "nested too deeply"}
	}
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return jsonValue(n.Content[0], depth)
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!merge") {
				return nil, &posError{k, fmt.Sprintf("key %s: keys must be strings", describe(k))}
			}
			if k.Tag == "!!merge" {
				return nil, &posError{k, "merge keys (<<) are not supported"}
			}
			v, err := jsonValue(n.Content[i+1], depth+1)
			if err != nil {
				return nil, err
			}
			m[k.Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		s := make([]any, 0, len(n.Content))
		for _, item := range n.Content {
			v, err := jsonValue(item, depth+1)
			if err != nil {
				return nil, err
			}
			s = append(s, v)
		}
		return s, nil
	}
	switch n.Tag {
	case "!!str", "!!timestamp", "!!binary":
		return n.Value, nil
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, &posError{n, err.Error()}
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			var f float64
			if err := n.Decode(&f); err != nil {
				return nil, &posError{n, fmt.Sprintf("number %s out of range", n.Value)}
			}
			return f, nil
		}
		return i, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, &posError{n, err.Error()}
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, &posError{n, fmt.Sprintf("%s is not a JSON number", n.Value)}
		}
		return f, nil
	}
	return nil, &posError{n, fmt.Sprintf("unsupported YAML tag %s", n.Tag)}
}

// suggest returns ` (did you mean "x"?)` for the known word closest to
// word, or "" when none is close.
func suggest(word string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if d := editdistance.Distance(strings.ToLower(word), strings.ToLower(k)); d < bestDist {
			best, bestDist = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// syntaxPos extracts the line of a yaml.v3 syntax error ("yaml: line 3:
// ...") and returns it with the message.
func syntaxPos(file string, err error) (source.Position, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil {
				return source.Position{File: file, Line: line}, "invalid YAML: " + text
			}
		}
	}
	return source.Position{File: file}, "invalid YAML: " + msg
}
