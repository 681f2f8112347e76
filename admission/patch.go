package admission

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
)

// Op is one JSON patch (RFC 6902) operation of an admission response:
// add, replace or remove.
type Op struct {
	Op   string
	Path string
	// Value is the value of an add or a replace (null included).
	Value any
}

// MarshalJSON writes the operation, with a value unless it is a remove.
func (o Op) MarshalJSON() ([]byte, error) {
	type value struct {
		Op    string `json:"op"`
		Path  string `json:"path"`
		Value any    `json:"value"`
	}
	if o.Op == "remove" {
		return json.Marshal(struct {
			Op   string `json:"op"`
			Path string `json:"path"`
		}{o.Op, o.Path})
	}
	return json.Marshal(value{o.Op, o.Path, o.Value})
}

// identity lists the fields a mutation may not change: they say which
// object the request is about, and the API server refuses a patch that
// changes them, or stores another object than the one it asked about.
var identity = [][]string{
	{"apiVersion"},
	{"kind"},
	{"metadata", "name"},
	{"metadata", "generateName"},
	{"metadata", "namespace"},
	{"metadata", "uid"},
}

// Patch returns the JSON patch operations that make obj (the request's
// object, as JSON data) what change asks for: nil for no change (change is
// nil, or changes nothing), a map[string]any for a JSON merge patch, a
// []any of JSON patch operations. obj is not modified.
//
// An operation that does not apply (a "replace" or "remove" of a field
// the object does not have, a failed "test"), a change to apiVersion,
// kind, metadata.name, metadata.generateName, metadata.namespace or
// metadata.uid, and a change of any other type are errors.
func Patch(obj map[string]any, change any) ([]Op, error) {
	if change == nil {
		return nil, nil
	}
	doc, err := json.Marshal(obj)
	if err != nil {
		return nil, fmt.Errorf("encode object: %w", err)
	}
	body, err := json.Marshal(change)
	if err != nil {
		return nil, fmt.Errorf("encode change: %w", err)
	}
	var patched []byte
	switch change.(type) {
	case map[string]any:
		if patched, err = jsonpatch.MergePatch(doc, body); err != nil {
			return nil, fmt.Errorf("merge patch: %w", err)
		}
	case []any:
		if patched, err = applyOps(doc, body); err != nil {
			return nil, fmt.Errorf("json patch: %w", err)
		}
	default:
		return nil, fmt.Errorf("a change is a merge patch (an object) or JSON patch operations (an array), not %T", change)
	}
	before, err := decode(doc)
	if err != nil {
		return nil, err
	}
	after, err := decode(patched)
	if err != nil {
		return nil, err
	}
	var bad []string
	for _, path := range identity {
		v1, ok1 := lookup(before, path)
		v2, ok2 := lookup(after, path)
		if ok1 != ok2 || !reflect.DeepEqual(v1, v2) {
			bad = append(bad, strings.Join(path, "."))
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("the change may not alter %s, which identify the object", strings.Join(bad, ", "))
	}
	m1, ok1 := before.(map[string]any)
	m2, ok2 := after.(map[string]any)
	if !ok1 || !ok2 {
		return nil, errors.New("the patched object is not an object")
	}
	return diff(nil, "", m1, m2), nil
}

// applyOps applies the JSON patch body to doc one operation at a time,
// so that a "replace" of a field that is not there is refused, as RFC
// 6902 says and the library (like the API server) does not.
func applyOps(doc, body []byte) ([]byte, error) {
	ops, err := jsonpatch.DecodePatch(body)
	if err != nil {
		return nil, err
	}
	for i, op := range ops {
		if op.Kind() == "replace" {
			path, err := op.Path()
			if err != nil {
				return nil, fmt.Errorf("operation %d: %w", i, err)
			}
			cur, err := decode(doc)
			if err != nil {
				return nil, err
			}
			if !hasPointer(cur, path) {
				return nil, fmt.Errorf("operation %d: replace %s: the object has no such field", i, path)
			}
		}
		one := jsonpatch.Patch{op}
		if doc, err = one.Apply(doc); err != nil {
			return nil, fmt.Errorf("operation %d: %w", i, err)
		}
	}
	return doc, nil
}

// hasPointer reports whether the JSON pointer (RFC 6901) p names a value
// of v; "" names v itself.
func hasPointer(v any, p string) bool {
	if p == "" {
		return true
	}
	if !strings.HasPrefix(p, "/") {
		return false
	}
	for _, tok := range strings.Split(p[1:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		switch x := v.(type) {
		case map[string]any:
			var ok bool
			if v, ok = x[tok]; !ok {
				return false
			}
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(x) {
				return false
			}
			v = x[i]
		default:
			return false
		}
	}
	return true
}

// decode decodes JSON, keeping numbers as written, so that an integer
// too large for a float64 is compared and sent back unchanged.
func decode(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode patched object: %w", err)
	}
	return v, nil
}

func lookup(v any, path []string) (any, bool) {
	for _, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

// diff appends to ops the operations that turn a into b, at path, in the
// order of the keys: maps are compared key by key, anything else is
// replaced whole when it differs.
func diff(ops []Op, path string, a, b map[string]any) []Op {
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
		p := path + "/" + escape(k)
		va, inA := a[k]
		vb, inB := b[k]
		switch {
		case !inB:
			ops = append(ops, Op{Op: "remove", Path: p})
		case !inA:
			ops = append(ops, Op{Op: "add", Path: p, Value: vb})
		default:
			ma, okA := va.(map[string]any)
			mb, okB := vb.(map[string]any)
			switch {
			case okA && okB:
				ops = diff(ops, p, ma, mb)
			case !reflect.DeepEqual(va, vb):
				ops = append(ops, Op{Op: "replace", Path: p, Value: vb})
			}
		}
	}
	return ops
}

// escape escapes a key for a JSON pointer (RFC 6901).
func escape(k string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(k)
}
