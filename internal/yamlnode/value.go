package yamlnode

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/diag"
)

// Value converts n to JSON data (map[string]any, []any, string, int64,
// float64, bool, nil), as the scripts and the API server see it. Unlike
// yaml.v3's own decoding into any, timestamps stay strings, integers are
// int64 and only string keys are accepted.
func (d *Decoder) Value(n *yaml.Node, path string) (any, bool) {
	v, err := jsonValue(n, 0)
	if err != nil {
		var pe *posError
		if errors.As(err, &pe) {
			d.Errorf(pe.n, "%s: %s", path, pe.msg)
		} else {
			d.Errorf(n, "%s: %v", path, err)
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
	n = Deref(n)
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
				return nil, &posError{k, fmt.Sprintf("key %s: keys must be strings", Describe(k))}
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

// SyntaxPos extracts the line of a yaml.v3 syntax error ("yaml: line 3:
// ...") and returns it with the message.
func SyntaxPos(file string, err error) (diag.Position, string) {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if num, text, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(num); err == nil {
				return diag.Position{File: file, Line: line}, "invalid YAML: " + text
			}
		}
	}
	return diag.Position{File: file}, "invalid YAML: " + msg
}
