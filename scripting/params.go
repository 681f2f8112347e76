package scripting

import (
	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"

	"github.com/kreact/kreact/event"
)

// A handler's arguments cost the call what it takes to build them: the
// objects' views and ctx are two script objects each, a good part of a
// short call's allocations. Many handlers declare a parameter they never
// read (ctx, or oldObj), so the runtime hands them undefined in its place.
// Whether a parameter is read is a matter of the function's own text, so
// it is decided once, at Compile, for the handlers' declarations
// (unusedArgs), and a runtime applies it to a handler only when the
// function it calls has that very text (Function.prototype.toString,
// checked once per runtime: handlerArgs): a handler assigned some other
// way, or wrapped, bound or replaced, gets every argument.

// unusedArgs is what Compile records of one handler's declaration: its
// source text, and a bit for each argument position its code can never
// read (bit 0 for the first argument).
type unusedArgs struct {
	source string
	mask   uint8
}

// unusedArgsOf finds, for each handler the script declares at top level
// (a function declaration, or a variable initialised with a function or
// arrow, as readPaths finds them), the arguments its code never reads: a
// parameter that is a plain name without a default value, and that no
// name anywhere else in the function spells (a nested function's use, a
// shorthand property, typeof, a shadowing declaration alike: any
// identifier with that name counts as a read). A function that names
// arguments or eval reads them all.
func unusedArgsOf(tree *ast.Program) [event.NumTypes]unusedArgs {
	var out [event.NumTypes]unusedArgs
	handler := func(name string, params *ast.ParameterList, body ast.Node, source string) {
		for i, t := range event.Types() {
			if t.Handler() == name && params != nil && body != nil {
				out[i] = unusedArgs{source: source, mask: unusedParams(params, body)}
			}
		}
	}
	topLevelFunctions(tree, handler)
	return out
}

// unusedParams returns the bits of the parameters in params that body
// and the other parameters never name (see unusedArgsOf).
func unusedParams(params *ast.ParameterList, body ast.Node) uint8 {
	var mask uint8
	for i, b := range params.List {
		id, ok := b.Target.(*ast.Identifier)
		if !ok || b.Initializer != nil || i >= 8 {
			continue
		}
		named := false
		see := func(n any) {
			var s string
			switch n := n.(type) {
			case *ast.Identifier:
				s = n.Name.String()
			case ast.Identifier:
				s = n.Name.String()
			default:
				return
			}
			if s == id.Name.String() || s == "arguments" || s == "eval" {
				named = true
			}
		}
		inspect(body, see)
		for j, other := range params.List {
			if j != i {
				inspect(other, see)
			}
		}
		if params.Rest != nil {
			inspect(params.Rest, see)
		}
		if !named {
			mask |= 1 << i
		}
	}
	return mask
}

// handlerArgs returns the unused arguments of the handler fn of type
// index i: what Compile found of its declaration if fn has the
// declaration's text (toString is the original Function.prototype.toString),
// else none.
func (p *Program) handlerArgs(i int, fn goja.Value, toString goja.Callable) uint8 {
	u := p.unused[i]
	if u.mask == 0 || toString == nil {
		return 0
	}
	src, err := toString(fn)
	if err != nil || src.String() != u.source {
		return 0
	}
	return u.mask
}
