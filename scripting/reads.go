package scripting

import (
	"slices"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/projection"
)

// ReadPath is a path a handler visibly reads of one of its objects: a
// chain of property reads such as newObj.spec.template.spec or
// obj["spec"].replicas, rooted at a parameter of onAdd, onUpdate,
// onDelete or onTimer that holds an object.
type ReadPath struct {
	// Handler is the handler: "onUpdate".
	Handler string
	// Param is the parameter as the script names it: "newObj".
	Param string
	// Path holds the keys read, up to the first computed one
	// (obj.spec[k].x reads spec); never empty.
	Path projection.Path
	// Pos is where the chain starts: the parameter's name. It is where
	// kreact validate and kreact test both place a read of the path, or
	// of a prefix of it (Program.placeRead).
	Pos diag.Position
}

// ReadName writes a path read through a parameter as the script writes
// it: "newObj.spec.template", "obj.items[0]". kreact validate and kreact
// test name reads so.
func ReadName(param string, path projection.Path) string {
	s := path.String()
	if !strings.HasPrefix(s, "[") {
		s = "." + s
	}
	return param + s
}

// paramName returns the name the script gives the object parameter
// number i of handler (its place among objectParams), or "" when it is
// not a plain identifier.
func (p *Program) paramName(handler string, i int) string {
	if names := p.params[handler]; i < len(names) {
		return names[i]
	}
	return ""
}

// placeRead returns where the script writes a read of path through
// parameter param of handler that the runtime made at at: the start of a
// chain of ReadPaths on that line that reads path (the nearest one
// starting before at, else the first), as kreact validate places it, so
// that both commands point at the same place; at itself when there is
// none (a read through another variable, or an "in" test), which is then
// where goja was.
func (p *Program) placeRead(handler, param string, path projection.Path, at diag.Position) diag.Position {
	before, first := -1, -1
	for i, r := range p.reads {
		if r.Handler != handler || r.Param != param || r.Pos.Line != at.Line || r.Pos.File != at.File ||
			len(r.Path) < len(path) || !slices.Equal(r.Path[:len(path)], path) {
			continue
		}
		if r.Pos.Col <= at.Col && (before < 0 || r.Pos.Col > p.reads[before].Pos.Col) {
			before = i
		}
		if first < 0 || r.Pos.Col < p.reads[first].Pos.Col {
			first = i
		}
	}
	switch {
	case before >= 0:
		at.Col = p.reads[before].Pos.Col
	case first >= 0:
		at.Col = p.reads[first].Pos.Col
	}
	return at
}

// ReadPaths returns the paths the handlers visibly read of their
// objects, in source order: what `kreact validate` compares with a rule's
// spec.watch[].fields. It sees what is written, not what runs: reads
// through another variable (const s = obj.spec; s.template), through a
// helper function, or of a parameter that the handler assigns or
// declares again in an inner scope, are not listed.
func (p *Program) ReadPaths() []ReadPath { return p.reads }

// objectParams are, per handler, the positions of the parameters that
// hold objects.
var objectParams = map[string][]int{
	"onAdd":    {0},
	"onUpdate": {0, 1},
	"onDelete": {0},
	"onTimer":  {0},
}

// readPaths finds the ReadPaths of a parsed script: the handlers are the
// top-level function declarations, and variables initialised with a
// function or arrow, of the handlers' names.
func (p *Program) readPaths(tree *ast.Program) []ReadPath {
	var out []ReadPath
	handler := func(name string, params *ast.ParameterList, body ast.Node) {
		which, ok := objectParams[name]
		if !ok || params == nil || body == nil {
			return
		}
		tracked := map[string]bool{}
		names := make([]string, len(which))
		for j, i := range which {
			if i < len(params.List) {
				if id, ok := params.List[i].Target.(*ast.Identifier); ok {
					tracked[id.Name.String()] = true
					names[j] = id.Name.String()
				}
			}
		}
		if p.params == nil {
			p.params = map[string][]string{}
		}
		p.params[name] = names
		for n := range rebound(body) {
			delete(tracked, n)
		}
		if len(tracked) == 0 {
			return
		}
		for _, r := range chains(body, tracked) {
			r.Handler = name
			r.Pos = p.position(tree.File.Position(int(r.at) - tree.File.Base()))
			out = append(out, r.ReadPath)
		}
	}
	topLevelFunctions(tree, func(name string, params *ast.ParameterList, body ast.Node, _ string) {
		handler(name, params, body)
	})
	return out
}

// rebound returns the names that body binds or assigns anywhere: its
// declarations, the parameters and names of the functions in it, catch
// parameters and plain assignments. A handler parameter among them may
// hold something else where it is read, so its reads are not listed.
func rebound(body ast.Node) map[string]bool {
	names := map[string]bool{}
	targets := func(t any) {
		if t == nil {
			return
		}
		inspect(t, func(n any) {
			switch n := n.(type) {
			case *ast.Identifier:
				names[n.Name.String()] = true
			case ast.Identifier:
				names[n.Name.String()] = true
			}
		})
	}
	inspect(body, func(n any) {
		switch n := n.(type) {
		case *ast.Binding:
			targets(n.Target)
		case *ast.ForDeclaration:
			targets(n.Target)
		case *ast.CatchStatement:
			targets(n.Parameter)
		case *ast.FunctionLiteral:
			if n.Name != nil {
				names[n.Name.Name.String()] = true
			}
		case *ast.ClassLiteral:
			if n.Name != nil {
				names[n.Name.Name.String()] = true
			}
		case *ast.AssignExpression:
			targets(n.Left)
		case *ast.UnaryExpression:
			// ++obj, obj--
			if id, ok := n.Operand.(*ast.Identifier); ok {
				names[id.Name.String()] = true
			}
		}
	})
	return names
}

// chainRead is a ReadPath and the offset of its start.
type chainRead struct {
	ReadPath
	at file.Idx
}

// chains returns the longest chains of property reads in body rooted at
// a tracked name.
func chains(body ast.Node, tracked map[string]bool) []chainRead {
	// inner are the member expressions that are the object of another:
	// obj.spec in obj.spec.replicas. Only the outermost chain counts.
	inner := map[ast.Expression]bool{}
	var members []ast.Expression
	inspect(body, func(n any) {
		var left ast.Expression
		switch n := n.(type) {
		case *ast.DotExpression:
			left = n.Left
		case *ast.BracketExpression:
			left = n.Left
		default:
			return
		}
		members = append(members, n.(ast.Expression))
		if l := unwrapOptional(left); l != nil {
			inner[l] = true
		}
	})
	var out []chainRead
	for _, m := range members {
		if inner[m] {
			continue
		}
		// Walk down to the root, collecting keys outermost first.
		var keys []string
		cur := m
		for {
			switch e := cur.(type) {
			case *ast.DotExpression:
				keys = append(keys, e.Identifier.Name.String())
				cur = unwrapOptional(e.Left)
				continue
			case *ast.BracketExpression:
				if s, ok := e.Member.(*ast.StringLiteral); ok {
					keys = append(keys, s.Value.String())
				} else {
					// A computed key: the path read ends before it.
					keys = keys[:0]
				}
				cur = unwrapOptional(e.Left)
				continue
			}
			break
		}
		root, ok := cur.(*ast.Identifier)
		if !ok || !tracked[root.Name.String()] || len(keys) == 0 {
			continue
		}
		path := make(projection.Path, len(keys))
		for i, k := range keys {
			path[len(keys)-1-i] = k
		}
		out = append(out, chainRead{ReadPath: ReadPath{Param: root.Name.String(), Path: path}, at: root.Idx})
	}
	return out
}

// unwrapOptional returns e without the wrappers of optional chaining
// (obj?.spec).
func unwrapOptional(e ast.Expression) ast.Expression {
	for {
		switch o := e.(type) {
		case *ast.Optional:
			e = o.Expression
		case *ast.OptionalChain:
			e = o.Expression
		default:
			return e
		}
	}
}

// topLevelFunctions calls fn for each function a script declares at top
// level, with its name, parameters, body and source text: a function
// declaration, or a variable (var, let, const) initialised with a
// function or an arrow. Those are what can be a handler; readPaths and
// unusedArgsOf look at the same ones.
func topLevelFunctions(tree *ast.Program, fn func(name string, params *ast.ParameterList, body ast.Node, source string)) {
	function := func(name string, e ast.Expression) {
		switch f := e.(type) {
		case *ast.FunctionLiteral:
			fn(name, f.ParameterList, f.Body, f.Source)
		case *ast.ArrowFunctionLiteral:
			fn(name, f.ParameterList, f.Body, f.Source)
		}
	}
	bindings := func(list []*ast.Binding) {
		for _, b := range list {
			if id, ok := b.Target.(*ast.Identifier); ok && b.Initializer != nil {
				function(id.Name.String(), b.Initializer)
			}
		}
	}
	for _, st := range tree.Body {
		switch st := st.(type) {
		case *ast.FunctionDeclaration:
			if st.Function.Name != nil {
				function(st.Function.Name.Name.String(), st.Function)
			}
		case *ast.VariableStatement:
			bindings(st.List)
		case *ast.LexicalDeclaration:
			bindings(st.List)
		}
	}
}
