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

	"github.com/kreact/kreact/event"
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
//
// With enc set it builds nothing: it appends to buf the JSON that
// marshalJSON writes of the data, and its methods return nil data. A merge
// patch is converted only to be encoded, at every kreact.patch, and its
// maps cost more than the rest of the conversion.
type converter struct {
	// path is where the walk is, for error messages.
	path []pathStep
	// parents are the objects being walked, to report cycles.
	parents []*goja.Object
	size    int
	enc     bool
	buf     []byte
	// keys is appendJSON's scratch space.
	keys []string
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
	x, _, err := e.convert(v, root, false)
	return x, err
}

// encodeJSON is marshalJSON(toJSON(v, root)), without the data in
// between.
func (e *env) encodeJSON(v goja.Value, root string) ([]byte, error) {
	_, data, err := e.convert(v, root, true)
	return data, err
}

func (e *env) convert(v goja.Value, root string, enc bool) (any, []byte, error) {
	c := converter{path: e.pathBuf[:0], parents: e.parentBuf[:0], enc: enc, buf: e.jsonBuf[:0], keys: e.keyBuf[:0]}
	if prefix, ok := strings.CutSuffix(root, "."); ok {
		c.path = append(c.path, keyStep(prefix))
		root = prefix
	}
	x, err := c.value(v)
	e.pathBuf, e.parentBuf = c.path[:0], c.parents[:0]
	var data []byte
	if enc && err == nil {
		data = slices.Clone(c.buf)
	}
	e.jsonBuf, e.keyBuf = keepScratch(c.buf, c.keys)
	if err != nil {
		if err.path == "" {
			err.path = root
		}
		return nil, nil, err
	}
	return x, data, nil
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

// emit returns x, the data of a value that err did not refuse, or, with
// enc set, appends its JSON to buf.
func (c *converter) emit(x any, err *convError) (any, *convError) {
	if err != nil || !c.enc {
		return x, err
	}
	var werr error
	if c.buf, werr = appendJSON(c.buf, x, &c.keys); werr != nil {
		return nil, c.fail("is not JSON data: %v", werr)
	}
	return nil, nil
}

func (c *converter) value(v goja.Value) (any, *convError) {
	if err := c.grow(1); err != nil {
		return nil, err
	}
	if v == nil || goja.IsUndefined(v) {
		return nil, c.fail("is undefined")
	}
	if goja.IsNull(v) {
		return c.emit(nil, nil)
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
		return c.emit(x, c.grow(len(x)))
	case int64:
		return c.emit(x, nil)
	case float64:
		return c.emit(c.float(x))
	case bool:
		return c.emit(x, nil)
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
		return c.emit(c.copyJSON(o.Export().(*objectView).m))
	case arrayViewType:
		return c.emit(c.copyJSON(o.Export().(*arrayView).s))
	case strictViewType:
		return c.emit(c.copyJSON(o.Export().(*strictView).plain.m))
	case listViewType:
		items := o.Export().(*listView).items
		out := make([]any, len(items))
		for i, it := range items {
			c.path = append(c.path, indexStep(i))
			x, err := c.copyJSON(it.Object)
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out[i] = x
		}
		return c.emit(out, nil)
	case stringsViewType:
		s := o.Export().(*stringsView).s
		out := make([]any, len(s))
		for i, x := range s {
			out[i] = x
		}
		return c.emit(out, nil)
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
		var out []any
		if c.enc {
			c.buf = append(c.buf, '[')
		} else {
			out = make([]any, 0, min(n, 1024))
		}
		for i := int64(0); i < n; i++ {
			c.path = append(c.path, indexStep(int(i)))
			if c.enc && i > 0 {
				c.buf = append(c.buf, ',')
			}
			x, err := c.value(o.Get(strconv.FormatInt(i, 10)))
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			out = append(out, x)
		}
		if c.enc {
			c.buf = append(c.buf, ']')
			return nil, nil
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
		var out map[string]any
		if c.enc {
			// In marshalJSON's order.
			slices.Sort(keys)
			c.buf = append(c.buf, '{')
		} else {
			out = make(map[string]any, len(keys))
		}
		for i, k := range keys {
			c.path = append(c.path, keyStep(k))
			if err := c.grow(len(k)); err != nil {
				return nil, err
			}
			if c.enc {
				if i > 0 {
					c.buf = append(c.buf, ',')
				}
				var err error
				if c.buf, err = appendJSONString(c.buf, k); err != nil {
					return nil, c.fail("is not JSON data: %v", err)
				}
				c.buf = append(c.buf, ':')
			}
			x, err := c.value(o.Get(k))
			if err != nil {
				return nil, err
			}
			c.path = c.path[:len(c.path)-1]
			if !c.enc {
				out[k] = x
			}
		}
		if c.enc {
			c.buf = append(c.buf, '}')
			return nil, nil
		}
		return out, nil
	case "Date":
		ms := o.ToFloat()
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			return nil, c.fail("is an invalid Date")
		}
		return c.emit(time.UnixMilli(int64(ms)).UTC().Format(time.RFC3339), nil)
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
			c.path = append(c.path, keyStep(k))
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
			c.path = append(c.path, indexStep(i))
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

// pathStep is one step of a path: a key, or an index when index >= 0. It
// is a struct rather than an any holding a string or an int, which would
// allocate at every step.
type pathStep struct {
	key   string
	index int
}

func keyStep(k string) pathStep { return pathStep{key: k, index: -1} }
func indexStep(i int) pathStep  { return pathStep{index: i} }

// marshalJSON is json.Marshal for JSON data (what toJSON returns), byte
// for byte, without its reflection: it is on the path of every
// kreact.patch. Keys are sorted; strings with characters that
// json.Marshal escapes, numbers that are not integers and values of other
// types are written by json.Marshal. buf and keys are scratch space,
// returned for reuse; the result is a copy.
func marshalJSON(x any, buf []byte, keys []string) (data, bufOut []byte, keysOut []string, err error) {
	buf, err = appendJSON(buf[:0], x, &keys)
	if err == nil {
		data = slices.Clone(buf)
	}
	buf, keys = keepScratch(buf, keys)
	return data, buf, keys, err
}

// keepScratch returns scratch space to keep for the next use: emptied,
// and not kept when a large value grew it.
func keepScratch(buf []byte, keys []string) ([]byte, []string) {
	// A failure leaves the keys of the maps it was in.
	clear(keys)
	keys = keys[:0]
	if cap(buf) > maxScratch {
		buf = nil
	}
	if cap(keys) > maxScratch/16 {
		keys = nil
	}
	return buf[:0], keys
}

// maxScratch bounds, in bytes, the scratch space a runtime keeps between
// calls.
const maxScratch = 64 << 10

func appendJSON(b []byte, x any, keys *[]string) ([]byte, error) {
	var err error
	switch x := x.(type) {
	case nil:
		return append(b, "null"...), nil
	case bool:
		return strconv.AppendBool(b, x), nil
	case int64:
		return strconv.AppendInt(b, x, 10), nil
	case string:
		return appendJSONString(b, x)
	case []any:
		if x == nil {
			return append(b, "null"...), nil
		}
		b = append(b, '[')
		for i, v := range x {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = appendJSON(b, v, keys); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case map[string]any:
		if x == nil {
			return append(b, "null"...), nil
		}
		// This map's keys sit at the end of the scratch slice, nested
		// maps' after them, until each is done.
		start := len(*keys)
		for k := range x {
			*keys = append(*keys, k)
		}
		end := len(*keys)
		slices.Sort((*keys)[start:end])
		b = append(b, '{')
		for i := start; i < end; i++ {
			k := (*keys)[i]
			if i > start {
				b = append(b, ',')
			}
			if b, err = appendJSONString(b, k); err != nil {
				return nil, err
			}
			b = append(b, ':')
			if b, err = appendJSON(b, x[k], keys); err != nil {
				return nil, err
			}
		}
		clear((*keys)[start:end])
		*keys = (*keys)[:start]
		return append(b, '}'), nil
	}
	data, err := json.Marshal(x)
	if err != nil {
		return nil, err
	}
	return append(b, data...), nil
}

// appendJSONString writes s as it is, between quotes, when it is
// printable ASCII without the characters json.Marshal escapes, and
// otherwise as json.Marshal writes it.
func appendJSONString(b []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x80, c == '"', c == '\\', c == '<', c == '>', c == '&':
			data, err := json.Marshal(s)
			if err != nil {
				return nil, err
			}
			return append(b, data...), nil
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), nil
}

// formatPath renders a path as a script would write it: spec.replicas,
// spec.containers[0].image, metadata.labels["app.kubernetes.io/name"].
func formatPath(path []pathStep) string {
	var b []byte
	for _, p := range path {
		if p.index >= 0 {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(p.index), 10)
			b = append(b, ']')
			continue
		}
		b = event.AppendKey(b, p.key)
	}
	return string(b)
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
