package scripting

import (
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
)

var plainObjectType = reflect.TypeOf(map[string]any(nil))

const (
	// maxDepth bounds the nesting of a value a script hands over (and so
	// the recursion of the conversion); Kubernetes objects nest far less.
	maxDepth = 100
	// maxValueSize bounds the size of a value a script hands over, about
	// its JSON size: the API server refuses requests above 3 MiB anyway.
	maxValueSize = 3 << 20
)

// converter turns a script value into JSON data (map[string]any, []any,
// string, int64, float64, bool, nil), refusing anything JSON cannot carry
// instead of dropping or mangling it as Export and JSON.stringify do.
type converter struct {
	e *env
	// path is where the walk is, for error messages; each element is a
	// key (string) or an index (int).
	path []any
	// parents are the objects being walked, to report cycles.
	parents []*goja.Object
	size    int
}

// convError is a value a script handed over that is not JSON data.
type convError struct {
	path string
	msg  string
}

func (e *convError) Error() string { return e.path + " " + e.msg }

// toJSON converts v. The error names the offending path, e.g.
// "spec.replicas is NaN". root names the value itself: it is the error's
// path when the value itself is wrong, and, when it ends with ".", the
// prefix of every path ("body." gives "body.n is NaN").
func (e *env) toJSON(v goja.Value, root string) (any, error) {
	c := converter{e: e, path: e.pathBuf[:0], parents: e.parentBuf[:0]}
	if prefix, ok := strings.CutSuffix(root, "."); ok {
		c.path = append(c.path, prefix)
		root = prefix
	}
	x, err := c.value(v)
	e.pathBuf, e.parentBuf = c.path[:0], c.parents[:0]
	if err != nil {
		if err.path == "" {
			err.path = root
		}
		return nil, err
	}
	return x, nil
}

func (c *converter) fail(format string, args ...any) *convError {
	return &convError{path: formatPath(c.path), msg: fmt.Sprintf(format, args...)}
}

func (c *converter) grow(n int) *convError {
	c.size += n
	if c.size > maxValueSize {
		return c.fail("is too large (more than %d bytes)", maxValueSize)
	}
	return nil
}

func (c *converter) value(v goja.Value) (any, *convError) {
	if err := c.grow(1); err != nil {
		return nil, err
	}
	if v == nil || goja.IsUndefined(v) {
		return nil, c.fail("is undefined")
	}
	if goja.IsNull(v) {
		return nil, nil
	}
	switch v := v.(type) {
	case *goja.Object:
		return c.object(v)
	case *goja.Symbol:
		// Checked before Export, which turns a symbol into a string.
		return nil, c.fail("is a symbol")
	}
	switch x := v.Export().(type) {
	case string:
		return x, c.grow(len(x))
	case int64:
		return x, nil
	case float64:
		return c.float(x)
	case bool:
		return x, nil
	case *big.Int:
		return nil, c.fail("is a BigInt")
	default:
		return nil, c.fail("is a %T", x)
	}
}

func (c *converter) float(f float64) (any, *convError) {
	switch {
	case math.IsNaN(f):
		return nil, c.fail("is NaN")
	case math.IsInf(f, 0):
		return nil, c.fail("is %s", strconv.FormatFloat(f, 'g', -1, 64))
	case f == math.Trunc(f) && math.Abs(f) < 1<<53:
		// Integral numbers become int64, as when JSON is decoded into
		// unstructured, so that NestedInt64 and friends work.
		return int64(f), nil
	}
	return f, nil
}

func (c *converter) object(o *goja.Object) (any, *convError) {
	switch o.ExportType() {
	case objectViewType:
		return c.copyJSON(o.Export().(*objectView).m)
	case arrayViewType:
		return c.copyJSON(o.Export().(*arrayView).s)
	case strictViewType:
		return c.copyJSON(o.Export().(*strictView).plain.m)
	case listViewType:
		items := o.Export().(*listView).items
		out := make([]any, len(items))
		for i, it := range items {
			c.path = append(c.path, i)
			x, err := c.copyJSON(it.Object)
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out[i] = x
		}
		return out, nil
	case stringsViewType:
		s := o.Export().(*stringsView).s
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
		return out, nil
	}
	if _, ok := goja.AssertFunction(o); ok {
		return nil, c.fail("is a function")
	}
	if len(c.path) >= maxDepth {
		return nil, c.fail("is nested more than %d levels deep", maxDepth)
	}
	for _, p := range c.parents {
		if p.SameAs(o) {
			return nil, c.fail("is a circular reference")
		}
	}
	c.parents = append(c.parents, o)
	defer func() { c.parents = c.parents[:len(c.parents)-1] }()

	switch class := o.ClassName(); class {
	case "Array":
		n := o.Get("length").ToInteger()
		out := make([]any, 0, min(n, 1024))
		for i := int64(0); i < n; i++ {
			c.path = append(c.path, int(i))
			x, err := c.value(o.Get(strconv.FormatInt(i, 10)))
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out = append(out, x)
		}
		return out, nil
	case "Object":
		if o.ExportType() != plainObjectType {
			// Map, Set, typed arrays...: JSON.stringify would turn them
			// into {} silently.
			name := "an object that is not plain data"
			if tag := o.GetSymbol(goja.SymToStringTag); tag != nil && goja.IsString(tag) {
				name = "a " + tag.String()
			}
			return nil, c.fail("is %s, not JSON data", name)
		}
		keys := o.Keys()
		out := make(map[string]any, len(keys))
		for _, k := range keys {
			c.path = append(c.path, k)
			if err := c.grow(len(k)); err != nil {
				return nil, err
			}
			x, err := c.value(o.Get(k))
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out[k] = x
		}
		return out, nil
	case "Date":
		ms := o.ToFloat()
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			return nil, c.fail("is an invalid Date")
		}
		return time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339), nil
	default:
		return nil, c.fail("is a %s, not JSON data", class)
	}
}

// copyJSON deep-copies the Go data behind a view, normalising numbers as
// value does. Informer data is JSON already; the checks guard against
// objects some Go code built by hand.
func (c *converter) copyJSON(x any) (any, *convError) {
	if err := c.grow(1); err != nil {
		return nil, err
	}
	switch x := x.(type) {
	case nil, bool, int64:
		return x, nil
	case string:
		return x, c.grow(len(x))
	case float64:
		return c.float(x)
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		f, err := x.Float64()
		if err != nil {
			return nil, c.fail("is not a number: %q", string(x))
		}
		return c.float(f)
	case map[string]any:
		if len(c.path) >= maxDepth {
			return nil, c.fail("is nested more than %d levels deep", maxDepth)
		}
		out := make(map[string]any, len(x))
		for k, v := range x {
			c.path = append(c.path, k)
			if err := c.grow(len(k)); err != nil {
				return nil, err
			}
			y, err := c.copyJSON(v)
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out[k] = y
		}
		return out, nil
	case []any:
		if len(c.path) >= maxDepth {
			return nil, c.fail("is nested more than %d levels deep", maxDepth)
		}
		out := make([]any, len(x))
		for i, v := range x {
			c.path = append(c.path, i)
			y, err := c.copyJSON(v)
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out[i] = y
		}
		return out, nil
	}
	// A typed value a careless producer put into an object: take its JSON.
	b, err := json.Marshal(x)
	if err != nil {
		return nil, c.fail("is a %T that is not JSON data", x)
	}
	var y any
	if err := json.Unmarshal(b, &y); err != nil {
		return nil, c.fail("is a %T that is not JSON data", x)
	}
	return c.copyJSON(y)
}

// formatPath renders a path as a script would write it: spec.replicas,
// spec.containers[0].image, metadata.labels["app.kubernetes.io/name"].
func formatPath(path []any) string {
	var b strings.Builder
	for _, p := range path {
		switch p := p.(type) {
		case int:
			b.WriteByte('[')
			b.WriteString(strconv.Itoa(p))
			b.WriteByte(']')
		case string:
			if isIdentifier(p) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(p)
			} else {
				b.WriteByte('[')
				b.WriteString(strconv.Quote(p))
				b.WriteByte(']')
			}
		}
	}
	return b.String()
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

// fromJSON builds plain, writable script values from JSON data (the result
// of kreact.clone). Keys are inserted in sorted order.
func (e *env) fromJSON(x any) goja.Value {
	switch x := x.(type) {
	case map[string]any:
		o := e.vm.NewObject()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			_ = o.Set(k, e.fromJSON(x[k]))
		}
		return o
	case []any:
		items := make([]any, len(x))
		for i, v := range x {
			items[i] = e.fromJSON(v)
		}
		return e.vm.NewArray(items...)
	}
	return e.scalar(x)
}
