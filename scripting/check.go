package scripting

import (
	"errors"
	"fmt"
	"reflect"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/token"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

// The checks of a parsed script that goja's compiler leaves to run time,
// made at compile time so that `kreact validate` and `kreact test` refuse
// what `kreact run` would: a regular expression literal that does not
// compile, and a handler whose value can never be a function.

// checkTree returns the problems of a parsed script that goja's compiler
// does not report, each at its position, and false when compiling the
// script is not safe: a regular expression literal nests deeper than
// MaxRegexpNesting, or compiling it would allocate more than
// DefaultMemoryLimit (regexpSize), which goja would do without a check
// and without a way to interrupt it.
func (p *Program) checkTree(tree *ast.Program, declared []*ast.Identifier) (problems diag.ErrorList, compilable bool) {
	var out diag.ErrorList
	var regexps []*ast.RegExpLiteral
	mentions := map[string]int{} // handler name: identifiers not declaring it
	for _, t := range event.Types() {
		mentions[t.Handler()] = 0
	}
	decl := make(map[*ast.Identifier]bool, len(declared))
	for _, id := range declared {
		decl[id] = true
	}
	mention := func(name string) {
		if n, ok := mentions[name]; ok {
			mentions[name] = n + 1
		}
	}
	inspect(tree, func(n any) {
		switch n := n.(type) {
		case *ast.RegExpLiteral:
			regexps = append(regexps, n)
		case *ast.Identifier:
			if !decl[n] {
				mention(n.Name.String())
			}
		case ast.Identifier: // a property name, or {onAdd} shorthand
			mention(n.Name.String())
		}
	})
	at := func(idx file.Idx) *diag.Error {
		return p.newError(tree.File.Position(int(idx)-tree.File.Base()), "")
	}
	compilable = true
	for _, re := range regexps {
		msg := ""
		switch n, err := regexpSize(re.Pattern); {
		case err != nil:
			msg = err.Error()
		case n > DefaultMemoryLimit:
			msg = fmt.Sprintf("regular expression: compiling it would allocate about %s, over the limit of %s",
				FormatBytes(n), FormatBytes(DefaultMemoryLimit))
		}
		if msg != "" {
			e := at(re.Idx)
			e.Msg = msg
			out = append(out, e)
			compilable = false
			continue
		}
		// goja compiles a literal only where its value is used: in
		// `if (x) /(/;` it never does, and such a literal throws nowhere.
		// A program of the literal alone uses its value.
		if _, err := goja.Compile(p.name, re.Literal, true); err != nil {
			e := at(re.Idx)
			e.Msg = "invalid regular expression " + diag.Shorten(re.Literal) + ": " + compilerMessage(err)
			out = append(out, e)
		}
	}
	for _, t := range event.Types() {
		h := t.Handler()
		if id := notAFunction(tree, h, mentions[h] > 0); id != nil {
			e := at(id.Idx)
			e.Msg = h + " is declared but is not a function"
			out = append(out, e)
		}
	}
	return out, compilable
}

// compilerMessage is the message of a goja compile error, without its
// position.
func compilerMessage(err error) string {
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) {
		return se.Message
	}
	return err.Error()
}

// notAFunction returns where the top level declares the handler name with
// a value that can never be a function (`var onAdd = 5;`, `let onAdd;`),
// or nil. The engine would refuse the rule when it starts. A handler that
// the script mentions again (other than by declaring it) may be assigned
// a function later, and is left to run time, unless it is a const.
func notAFunction(tree *ast.Program, name string, mentioned bool) *ast.Identifier {
	var first *ast.Identifier
	function, inits, isConst := false, 0, false
	visit := func(list []*ast.Binding, constant bool) bool {
		for _, b := range list {
			id, ok := b.Target.(*ast.Identifier)
			if !ok || id.Name.String() != name {
				continue
			}
			if b.Initializer != nil {
				if mayBeFunction(b.Initializer) {
					return false
				}
				inits++
			}
			isConst = isConst || constant
			if first == nil {
				first = id
			}
		}
		return true
	}
	for _, st := range tree.Body {
		ok := true
		switch st := st.(type) {
		case *ast.FunctionDeclaration:
			function = function || (st.Function.Name != nil && st.Function.Name.Name.String() == name)
		case *ast.VariableStatement:
			ok = visit(st.List, false)
		case *ast.LexicalDeclaration:
			ok = visit(st.List, st.Token == token.CONST)
		}
		if !ok {
			return nil
		}
	}
	switch {
	case first == nil, mentioned && !isConst:
		return nil
	case inits == 0 && function:
		// `function onAdd() {} var onAdd;`: the var keeps the function.
		return nil
	}
	return first
}

// mayBeFunction reports whether the value of e may be a function. Literals
// other than functions and classes, and what operators compute, are not.
func mayBeFunction(e ast.Expression) bool {
	switch e := e.(type) {
	case *ast.NumberLiteral, *ast.StringLiteral, *ast.BooleanLiteral, *ast.NullLiteral,
		*ast.RegExpLiteral, *ast.ObjectLiteral, *ast.ArrayLiteral, *ast.UnaryExpression:
		return false
	case *ast.TemplateLiteral:
		return e.Tag != nil
	case *ast.BinaryExpression:
		switch e.Operator {
		case token.LOGICAL_AND, token.LOGICAL_OR, token.COALESCE:
			return mayBeFunction(e.Left) || mayBeFunction(e.Right)
		}
		return false
	case *ast.ConditionalExpression:
		return mayBeFunction(e.Consequent) || mayBeFunction(e.Alternate)
	case *ast.SequenceExpression:
		return len(e.Sequence) == 0 || mayBeFunction(e.Sequence[len(e.Sequence)-1])
	}
	return true
}

var (
	identifierType = reflect.TypeFor[ast.Identifier]()
	fileType       = reflect.TypeFor[*file.File]()
)

// inspect calls fn for every node of the tree below root (a node, or the
// whole *ast.Program), once: pointers to the ast package's structs, and
// Identifier values (property names). goja's ast has no walker, and its
// nodes are many; reflection finds them all, including those of syntax
// added later. The file is not walked.
func inspect(root any, fn func(any)) {
	type node struct {
		at uintptr
		t  reflect.Type
	}
	seen := map[node]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Pointer:
			n := node{v.Pointer(), v.Type()}
			if v.IsNil() || v.Type() == fileType || seen[n] {
				return
			}
			seen[n] = true
			if v.Elem().Kind() == reflect.Struct {
				fn(v.Interface())
			}
			walk(v.Elem())
		case reflect.Slice:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Struct:
			if v.Type() == identifierType && !(v.CanAddr() && seen[node{v.Addr().Pointer(), v.Addr().Type()}]) {
				// An Identifier held by value, not the one a pointer
				// led to (that was reported as the pointer).
				fn(v.Interface())
			}
			for i := range v.NumField() {
				if v.Type().Field(i).IsExported() {
					walk(v.Field(i))
				}
			}
		}
	}
	walk(reflect.ValueOf(root))
}
