package scripting

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/kreact/kreact/internal/governor"
	"github.com/kreact/kreact/rules"
)

// DefaultMemoryLimit is the memory budget of one call when
// RuntimeOptions.MemoryLimit is zero: the memory the call may take (see
// the Memory section of the package doc) before it is stopped. It is a
// rule's default (spec.memoryLimit), which package rules sets.
const DefaultMemoryLimit = rules.DefaultMemoryLimit

// Estimated costs, in bytes, that the checks of capAllocations charge
// before a built-in runs. They were measured with goja's own functions
// (/gc/heap/allocs:bytes around each); they are estimates, not bounds.
const (
	// bytesPerElement is one array element: a 16-byte interface value.
	bytesPerElement = 16
	// bytesPerChar is one character of a string built by a built-in: goja
	// keeps strings with any non-ASCII character as UTF-16. ASCII strings
	// take one byte, so they are charged twice what they take.
	bytesPerChar = 2
	// bytesPerPiece is one string of a result with a string per match or
	// per character (split, match, a string's iterator): about 49 bytes
	// for a one-character string.
	bytesPerPiece = 48
	// bytesPerJSONValue is what goja's JSON.parse allocates for one value:
	// 200 to 300 bytes for numbers, strings and empty objects.
	bytesPerJSONValue = 200
)

// FormatBytes writes n bytes for people: "64 MiB", "1.5 GiB", "512 bytes".
func FormatBytes(n int64) string { return governor.FormatBytes(n) }

// sizer estimates what a built-in is about to allocate, in bytes. It may
// replace call's this and arguments with the primitive values it
// converted them to, so that the built-in does not convert them (and run
// the script's toString or valueOf) a second time.
type sizer func(call *goja.FunctionCall) int64

// capAllocations makes the built-ins that can build, in one step, a value
// far larger than their arguments refuse to when the estimate is over the
// call's memory limit. goja's Interrupt is not checked inside built-in
// functions, so the call's watchdog cannot stop them once they run:
// 'x'.repeat(1<<30) allocates its gigabyte before any script instruction
// runs again. What a script builds step by step (a loop that pushes or
// concatenates) is the watchdog's (package internal/governor).
//
// The typed arrays, ArrayBuffer and DataView are removed: rules work on
// JSON, and their constructors allocate any size in one step.
func (e *env) capAllocations() {
	vm := e.vm
	global := vm.GlobalObject()
	e.rangeErrorCtor = vm.Get("RangeError").ToObject(vm)
	e.syntaxErrorCtor = vm.Get("SyntaxError").ToObject(vm)
	for _, name := range []string{"ArrayBuffer", "SharedArrayBuffer", "DataView",
		"Int8Array", "Uint8Array", "Uint8ClampedArray", "Int16Array", "Uint16Array",
		"Int32Array", "Uint32Array", "Float32Array", "Float64Array", "BigInt64Array", "BigUint64Array"} {
		if err := global.Delete(name); err != nil {
			panic(fmt.Sprintf("scripting: removing %s: %v", name, err))
		}
	}

	str := e.proto("String")
	e.capMethod(str, "String.prototype.repeat", "repeat", func(c *goja.FunctionCall) int64 {
		s := e.thisString(c)
		n := c.Argument(0).ToNumber()
		c.Arguments = []goja.Value{n}
		return mul(int64(s.Length()), clampCount(n.ToFloat()), bytesPerChar)
	})
	pad := func(c *goja.FunctionCall) int64 {
		e.thisString(c)
		n := c.Argument(0).ToNumber()
		c.Arguments = append([]goja.Value{n}, c.Arguments[min(1, len(c.Arguments)):]...)
		return mul(clampCount(n.ToFloat()), bytesPerChar, 1)
	}
	e.capMethod(str, "String.prototype.padStart", "padStart", pad)
	e.capMethod(str, "String.prototype.padEnd", "padEnd", pad)
	e.capMethod(str, "String.prototype.concat", "concat", func(c *goja.FunctionCall) int64 {
		total := int64(e.thisString(c).Length())
		args := make([]goja.Value, len(c.Arguments))
		for i, a := range c.Arguments {
			s := e.toString(a)
			args[i] = s
			total += int64(s.Length())
		}
		c.Arguments = args
		return mul(total, bytesPerChar, 1)
	})
	e.capMethod(str, "String.prototype.split", "split", func(c *goja.FunctionCall) int64 {
		s := e.thisString(c)
		return mul(e.pieces(s, c.Argument(0)), bytesPerPiece, 1)
	})
	e.capMethod(str, "String.prototype.match", "match", func(c *goja.FunctionCall) int64 {
		compile := e.patternSize(c, goja.SymMatch)
		return add(compile, mul(int64(e.thisString(c).Length())+1, bytesPerPiece, 1))
	})
	// matchAll and search compile an argument that is not a RegExp, as
	// the RegExp constructor does (capRegExp).
	e.capMethod(str, "String.prototype.matchAll", "matchAll", func(c *goja.FunctionCall) int64 {
		return e.patternSize(c, goja.SymMatchAll)
	})
	e.capMethod(str, "String.prototype.search", "search", func(c *goja.FunctionCall) int64 {
		return e.patternSize(c, goja.SymSearch)
	})
	e.capMethod(e.proto("RegExp"), "RegExp.prototype.compile", "compile", func(c *goja.FunctionCall) int64 {
		return e.patternSize(c, nil)
	})
	e.capRegExp()
	for _, name := range []string{"replace", "replaceAll"} {
		e.capMethod(str, "String.prototype."+name, name, func(c *goja.FunctionCall) int64 {
			return e.replaceSize(c, name == "replaceAll")
		})
	}
	e.capSymbolMethod(str, "String.prototype[Symbol.iterator]", goja.SymIterator, func(c *goja.FunctionCall) int64 {
		return mul(int64(e.thisString(c).Length()), bytesPerPiece, 1)
	})

	arr := e.proto("Array")
	// One element of the result per element of this: the methods that
	// walk the whole length natively, holes of a sparse array included.
	for _, name := range []string{"map", "filter", "slice", "splice", "sort", "reverse", "flat", "flatMap",
		"copyWithin", "with", "toReversed", "toSorted", "toSpliced", "keys", "entries"} {
		if o, ok := arr.Get(name).(*goja.Object); !ok || o == nil {
			continue
		}
		e.capMethod(arr, "Array.prototype."+name, name, func(c *goja.FunctionCall) int64 {
			return mul(e.length(c.This), bytesPerElement, 1)
		})
	}
	// values and Symbol.iterator are one function: spread and for-of
	// reach it through the symbol.
	values := e.capMethod(arr, "Array.prototype.values", "values", func(c *goja.FunctionCall) int64 {
		return mul(e.length(c.This), bytesPerElement, 1)
	})
	if err := arr.DefineDataPropertySymbol(goja.SymIterator, values, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: capping Array.prototype[Symbol.iterator]: %v", err))
	}
	e.capMethod(arr, "Array.prototype.fill", "fill", func(c *goja.FunctionCall) int64 {
		n := e.length(c.This)
		start := relIndex(c.Argument(1), 0, n)
		end := relIndex(c.Argument(2), n, n)
		return mul(max(end-start, 0), bytesPerElement, 1)
	})
	e.capMethod(arr, "Array.prototype.concat", "concat", func(c *goja.FunctionCall) int64 {
		n := e.length(c.This)
		for _, a := range c.Arguments {
			if o, ok := a.(*goja.Object); ok && o.ClassName() == "Array" {
				n += e.length(o)
			} else {
				n++
			}
		}
		return mul(n, bytesPerElement, 1)
	})
	e.capMethod(arr, "Array.prototype.join", "join", e.joinSize)

	array := vm.Get("Array").ToObject(vm)
	e.capMethod(array, "Array.from", "from", func(c *goja.FunctionCall) int64 {
		items := c.Argument(0)
		if goja.IsString(items) {
			return mul(int64(e.toString(items).Length()), bytesPerPiece, 1)
		}
		return mul(e.length(items), bytesPerElement, 1)
	})
	// The global Function is disabled (noDynamicCode); its prototype is
	// any function's.
	e.capMethod(array.Prototype(), "Function.prototype.apply", "apply", func(c *goja.FunctionCall) int64 {
		return mul(e.length(c.Argument(1)), bytesPerElement, 1)
	})
	reflect := vm.Get("Reflect").ToObject(vm)
	e.capMethod(reflect, "Reflect.apply", "apply", func(c *goja.FunctionCall) int64 {
		return mul(e.length(c.Argument(2)), bytesPerElement, 1)
	})
	e.capMethod(reflect, "Reflect.construct", "construct", func(c *goja.FunctionCall) int64 {
		return mul(e.length(c.Argument(1)), bytesPerElement, 1)
	})
}

// proto returns the prototype of the global constructor name.
func (e *env) proto(name string) *goja.Object {
	return e.vm.Get(name).ToObject(e.vm).Get("prototype").ToObject(e.vm)
}

// capMethod replaces o[name] by a function that refuses to call the
// original when size estimates more than the memory limit. The
// replacement keeps the original's name, length and attributes.
func (e *env) capMethod(o *goja.Object, what, name string, size sizer) *goja.Object {
	f := e.capped(o.Get(name), what, size)
	if err := o.DefineDataProperty(name, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: capping %s: %v", what, err))
	}
	return f
}

// capSymbolMethod is capMethod for a method named by a symbol.
func (e *env) capSymbolMethod(o *goja.Object, what string, sym *goja.Symbol, size sizer) {
	f := e.capped(o.GetSymbol(sym), what, size)
	if err := o.DefineDataPropertySymbol(sym, f, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: capping %s: %v", what, err))
	}
}

// capped returns the wrapper of the built-in orig. It keeps orig's Go
// function rather than orig: once the wrapper replaces it, nothing
// reaches the original function object, and its properties (a Go map
// for each function goja builds) are garbage rather than kept by every
// runtime for each capped method. The wrapper is called by goja like
// any native function, so calling the Go function from it is what
// goja's own built-ins do with a callback.
func (e *env) capped(orig goja.Value, what string, size sizer) *goja.Object {
	call := nativeOf(orig)
	if call == nil {
		panic(fmt.Sprintf("scripting: %s is not a function", what))
	}
	origObj := orig.ToObject(e.vm)
	name, length := origObj.Get("name"), origObj.Get("length")
	f := e.vm.ToValue(func(c goja.FunctionCall) goja.Value {
		if n := size(&c); n > e.cfg.opts.MemoryLimit {
			e.throwMemory(what, n)
		}
		return call(c)
	}).(*goja.Object)
	_ = f.DefineDataProperty("name", name, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	_ = f.DefineDataProperty("length", length, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_TRUE)
	return f
}

// nativeOf returns the Go function of the native function v (what goja's
// Export gives for one), or, for any other function, a call of it
// through goja; nil when v is not a function.
func nativeOf(v goja.Value) func(goja.FunctionCall) goja.Value {
	if f, ok := v.Export().(func(goja.FunctionCall) goja.Value); ok {
		return f
	}
	fn, ok := goja.AssertFunction(v)
	if !ok {
		return nil
	}
	return func(c goja.FunctionCall) goja.Value {
		v, err := fn(c.This, c.Arguments...)
		if err != nil {
			panic(err)
		}
		return v
	}
}

// throwMemory throws the RangeError of a built-in refused up front. A
// script may catch it: nothing was allocated.
func (e *env) throwMemory(what string, n int64) {
	panic(e.rangeError("memory limit: %s would allocate about %s, over the call's limit of %s",
		what, FormatBytes(n), FormatBytes(e.cfg.opts.MemoryLimit)))
}

// rangeError builds a RangeError with the constructor the runtime started
// with, whatever the script did to the global.
func (e *env) rangeError(format string, args ...any) *goja.Object {
	o, err := e.vm.New(e.rangeErrorCtor, e.vm.ToValue(fmt.Sprintf(format, args...)))
	if err != nil {
		panic(err)
	}
	return o
}

// capRegExp makes the RegExp constructor, called or constructed, refuse a
// pattern nested deeper than MaxRegexpNesting (a SyntaxError, as for any
// invalid pattern), or one whose compilation regexpSize estimates over the
// memory limit (a RangeError, as capMethod's), before goja compiles it:
// compiling cannot be interrupted, and a pattern of a million characters
// takes over 200 MB. The global and RegExp.prototype.constructor become a
// Proxy of the original, so that instanceof, subclasses and
// Symbol.species behave as before. Literals are checked by Compile.
func (e *env) capRegExp() {
	vm := e.vm
	orig := vm.Get("RegExp").ToObject(vm)
	call, ok := goja.AssertFunction(orig)
	construct, ok2 := goja.AssertFunction(vm.Get("Reflect").ToObject(vm).Get("construct"))
	if !ok || !ok2 {
		panic("scripting: RegExp or Reflect.construct is not a function")
	}
	check := func(args []goja.Value) []goja.Value {
		c := goja.FunctionCall{Arguments: slices.Clone(args)}
		var n int64
		if o, ok := c.Argument(0).(*goja.Object); ok && o.ClassName() != "RegExp" && isRegexpLike(o) {
			// goja compiles its source; reading it twice is the price
			// of an object that only looks like a RegExp.
			n = e.compileSize(e.toString(o.Get("source")).String())
		} else {
			n = e.patternSize(&c, nil)
		}
		if n > e.cfg.opts.MemoryLimit {
			e.throwMemory("RegExp", n)
		}
		return c.Arguments
	}
	var pv goja.Value
	p := vm.NewProxy(orig, &goja.ProxyTrapConfig{
		Apply: func(_ *goja.Object, this goja.Value, args []goja.Value) goja.Value {
			// RegExp(r) returns r itself, when r's constructor is
			// RegExp: the proxy now (goja compares with the original).
			if len(args) > 0 && (len(args) == 1 || goja.IsUndefined(args[1])) {
				if o, ok := args[0].(*goja.Object); ok && isRegexpLike(o) && o.Get("constructor").SameAs(pv) {
					return o
				}
			}
			v, err := call(this, check(args)...)
			if err != nil {
				panic(err)
			}
			return v
		},
		Construct: func(target *goja.Object, args []goja.Value, newTarget *goja.Object) *goja.Object {
			args = check(args)
			list := make([]any, len(args))
			for i, a := range args {
				list[i] = a
			}
			v, err := construct(goja.Undefined(), target, vm.NewArray(list...), newTarget)
			if err != nil {
				panic(err)
			}
			return v.ToObject(vm)
		},
	})
	pv = vm.ToValue(p)
	// goja's Proxy has no instanceof of its own; instanceof finds this
	// through the proxy (and through the subclasses of RegExp):
	// OrdinaryHasInstance with the prototype of the constructor on the
	// right, which for RegExp is the original's.
	hasInstance := vm.ToValue(func(c goja.FunctionCall) goja.Value {
		ctor, ok := c.This.(*goja.Object)
		v, ok2 := c.Argument(0).(*goja.Object)
		if !ok || !ok2 {
			return vm.ToValue(false)
		}
		proto, ok := ctor.Get("prototype").(*goja.Object)
		if !ok {
			panic(vm.NewTypeError("Function has non-object prototype in instanceof check"))
		}
		for o := v.Prototype(); o != nil; o = o.Prototype() {
			if o.SameAs(proto) {
				return vm.ToValue(true)
			}
		}
		return vm.ToValue(false)
	})
	if err := orig.DefineDataPropertySymbol(goja.SymHasInstance, hasInstance, goja.FLAG_FALSE, goja.FLAG_FALSE, goja.FLAG_FALSE); err != nil {
		panic(fmt.Sprintf("scripting: capping RegExp: %v", err))
	}
	for _, o := range []*goja.Object{vm.GlobalObject(), e.proto("RegExp")} {
		name := "RegExp"
		if o != vm.GlobalObject() {
			name = "constructor"
		}
		if err := o.DefineDataProperty(name, pv, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			panic(fmt.Sprintf("scripting: capping RegExp: %v", err))
		}
	}
}

// isRegexpLike reports whether o counts as a regular expression for the
// RegExp constructor (IsRegExp: a truthy Symbol.match), which then uses
// its source.
func isRegexpLike(o *goja.Object) bool {
	m := o.GetSymbol(goja.SymMatch)
	return m != nil && !goja.IsUndefined(m) && m.ToBoolean()
}

// patternSize is the sizer of a built-in that compiles its first argument
// as a regular expression unless it is a RegExp, or an object with the
// method sym that the built-in calls instead: it converts the argument
// once to the string that would be compiled, hands the built-in that
// string, and estimates compiling it (compileSize).
func (e *env) patternSize(c *goja.FunctionCall, sym *goja.Symbol) int64 {
	v := c.Argument(0)
	if o, ok := v.(*goja.Object); ok {
		if o.ClassName() == "RegExp" {
			return 0 // compiled already, and checked then
		}
		if sym != nil {
			if m := o.GetSymbol(sym); m != nil && !goja.IsUndefined(m) && !goja.IsNull(m) {
				return 0
			}
		}
	}
	if goja.IsUndefined(v) {
		return 0
	}
	s := e.toString(v)
	c.Arguments = append([]goja.Value{s}, c.Arguments[min(1, len(c.Arguments)):]...)
	return e.compileSize(s.String())
}

// compileSize is regexpSize, throwing its SyntaxError.
func (e *env) compileSize(pattern string) int64 {
	n, err := regexpSize(pattern)
	if err != nil {
		o, nerr := e.vm.New(e.syntaxErrorCtor, e.vm.ToValue(err.Error()))
		if nerr != nil {
			panic(nerr)
		}
		panic(o)
	}
	return n
}

// thisString converts the call's this to a string, once.
func (e *env) thisString(c *goja.FunctionCall) goja.String {
	if goja.IsUndefined(c.This) || goja.IsNull(c.This) {
		panic(e.vm.NewTypeError("String.prototype method called on null or undefined"))
	}
	s := e.toString(c.This)
	c.This = s
	return s
}

// toString converts v to a string as JavaScript's String(v) does.
func (e *env) toString(v goja.Value) goja.String {
	s := v.ToString()
	if gs, ok := s.(goja.String); ok {
		return gs
	}
	return e.vm.ToValue(s.String()).(goja.String)
}

// length reads the length of an array, array-like or string v; 0 for
// other primitives.
func (e *env) length(v goja.Value) int64 {
	if goja.IsString(v) {
		return int64(e.toString(v).Length())
	}
	o, ok := v.(*goja.Object)
	if !ok || o == nil {
		return 0
	}
	return clampCount(o.Get("length").ToFloat())
}

// pieces bounds how many strings split returns: exact for a string
// separator, the string's length plus one for a regular expression.
func (e *env) pieces(s goja.String, sep goja.Value) int64 {
	n := int64(s.Length())
	switch {
	case goja.IsUndefined(sep):
		return 1
	case goja.IsString(sep):
		sepStr := sep.String()
		if sepStr == "" {
			return n
		}
		return int64(strings.Count(s.String(), sepStr)) + 1
	default:
		return n + 1
	}
}

// replaceSize estimates replace and replaceAll: the matches a global
// regular expression collects before replacing, and the result when the
// replacement is a string. Each "$" in it may insert up to the whole
// string. A replacement function's results are not known in advance.
func (e *env) replaceSize(c *goja.FunctionCall, all bool) int64 {
	s := e.thisString(c)
	n := int64(s.Length())
	pattern, repl := c.Argument(0), c.Argument(1)
	var matches, size int64
	switch {
	case goja.IsString(pattern) && all:
		p := pattern.String()
		if p == "" {
			matches = n + 1
		} else {
			matches = int64(strings.Count(s.String(), p))
		}
	case goja.IsString(pattern):
		matches = 1
	default:
		matches = n + 1
		size = mul(matches, bytesPerPiece, 1)
	}
	if _, isFunc := goja.AssertFunction(repl); isFunc {
		return size
	}
	r := e.toString(repl)
	c.Arguments = []goja.Value{pattern, r}
	rs := r.String()
	each := int64(len(rs)) + int64(strings.Count(rs, "$"))*n
	return add(size, mul(add(n, mul(matches, each, 1)), bytesPerChar, 1))
}

// joinSize estimates join by converting the elements to strings first,
// and hands join those strings, so that no element's toString runs twice.
// An array that is being joined already (it contains itself) joins as "",
// as goja's join does.
func (e *env) joinSize(c *goja.FunctionCall) int64 {
	o := c.This.ToObject(e.vm)
	if slices.Contains(e.joining, o) {
		c.This = e.vm.NewArray()
		return 0
	}
	if len(e.joining) >= MaxJSONNesting {
		panic(e.rangeError("join: arrays nested deeper than %d levels", MaxJSONNesting))
	}
	e.joining = append(e.joining, o)
	defer func() { e.joining = e.joining[:len(e.joining)-1] }()
	n := e.length(o)
	if n*bytesPerElement > e.cfg.opts.MemoryLimit {
		return mul(n, bytesPerElement, 1)
	}
	sep := ","
	if a := c.Argument(0); !goja.IsUndefined(a) {
		sep = a.String()
	}
	total := mul(max(n-1, 0), int64(len(sep)), 1)
	strs := make([]any, n)
	for i := range n {
		v := o.Get(strconv.FormatInt(i, 10))
		if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
			strs[i] = ""
			continue
		}
		s := e.toString(v)
		strs[i] = s
		total = add(total, int64(s.Length()))
		if total*bytesPerChar > e.cfg.opts.MemoryLimit {
			return mul(total, bytesPerChar, 1)
		}
	}
	c.This = e.vm.NewArray(strs...)
	c.Arguments = []goja.Value{e.vm.ToValue(sep)}
	return mul(total, bytesPerChar, 1)
}

// jsonParseSize estimates what JSON.parse allocates for text with the
// given number of values.
func jsonParseSize(text string, values int64) int64 {
	return add(mul(values, bytesPerJSONValue, 1), mul(int64(len(text)), bytesPerChar, 1))
}

// clampCount turns a JavaScript count or length into an int64 that is
// safe to multiply: NaN and negatives are 0, huge values stay huge.
func clampCount(f float64) int64 {
	switch {
	case math.IsNaN(f) || f <= 0:
		return 0
	case f >= 1<<53:
		return 1 << 53
	}
	return int64(f)
}

// relIndex resolves a relative index argument of fill: undefined is def,
// negatives count from the end, the result lies in [0, n].
func relIndex(v goja.Value, def, n int64) int64 {
	if goja.IsUndefined(v) {
		return def
	}
	f := v.ToFloat()
	if math.IsNaN(f) {
		return 0
	}
	if f < 0 {
		return max(n+int64(math.Max(f, -1<<53)), 0)
	}
	return min(int64(math.Min(f, 1<<53)), n)
}

// mul multiplies non-negative sizes, saturating at MaxInt64.
func mul(a, b, c int64) int64 {
	if a == 0 || b == 0 || c == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	ab := a * b
	if ab > math.MaxInt64/c {
		return math.MaxInt64
	}
	return ab * c
}

// add adds non-negative sizes, saturating at MaxInt64.
func add(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
