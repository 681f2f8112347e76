package scripting

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
	"github.com/go-sourcemap/sourcemap"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

// compiles counts the calls of Compile in this process (Compiles).
var compiles atomic.Int64

// Compiles returns how many scripts this process has compiled (calls of
// Compile, whatever their outcome), so that tests can hold kreact to one
// compile per version of a rule (CompileRule). It is the package's one
// process-wide value: a count, which only grows, and which nothing
// branches on.
func Compiles() int64 { return compiles.Load() }

// CompileOptions places a script inside the file it was read from, so that
// reported positions point into that file.
type CompileOptions struct {
	// LineOffset is the number of file lines above the script's first line:
	// the line of the first script line minus one. Zero means the script
	// starts on the first line of the file.
	LineOffset int
	// ColumnOffset is the indentation of the script block in its file (for a
	// YAML block scalar, the number of spaces the block strips from every
	// line). It is added to every reported column. Zero means the script is
	// not indented.
	ColumnOffset int
	// TypeScript compiles the script as TypeScript (types are removed,
	// not checked); positions still point into the TypeScript source.
	TypeScript bool
}

// Program is a compiled rule script. It is immutable and safe to share: every
// Runtime of a rule runs the same Program.
type Program struct {
	name       string
	colOffset  int
	lineOffset int
	// sourceMap, for TypeScript, leads positions in the JavaScript that
	// goja runs back to the TypeScript source (lines before lineOffset).
	sourceMap *sourcemap.Consumer
	// empty marks the source lines (0-based, offset lines included) that
	// are empty: they had no indentation to strip, so positions on them
	// (the end of the input) are not shifted.
	empty []bool
	prg   *goja.Program
	// lookup evaluates to the array [onAdd, onUpdate, onDelete], with
	// undefined for the handlers the script does not declare.
	lookup   *goja.Program
	handlers [event.NumTypes]bool
	declared []Declaration
	reads    []ReadPath
	// params holds, per handler, the names of its object parameters
	// (objectParams), "" for one that is not a plain identifier.
	params map[string][]string
	onces  []diag.Position
	// unused holds, per handler, the arguments its declaration never
	// reads (params.go).
	unused [event.NumTypes]unusedArgs
}

// Name returns the file name the program was compiled with.
func (p *Program) Name() string { return p.name }

// HasHandler reports whether the script declares the handler for t at top
// level (onAdd, onUpdate, onDelete or onTick, as a function, var, let or
// const, exported or not). A handler the script does not declare is never
// called, so an engine can skip watching events nobody handles. Handlers
// set any other way (globalThis.onAdd = ...) are not recognised.
func (p *Program) HasHandler(t event.Type) bool {
	i, ok := t.Index()
	return ok && p.handlers[i]
}

// Compile parses and compiles a rule script once, in strict mode. name is the
// file the script was read from; it names positions in errors and stacks.
//
// A syntax error is returned as a diag.ErrorList, one error per problem
// found (errors.As finds the first *diag.Error). So are the mistakes
// that goja would otherwise report only when the code runs, or never: a
// regular expression literal that does not compile, wherever it is, and a
// handler declared with a value that can never be a function (`var onAdd
// = 5;`), which NewRuntime would refuse. Source
// maps are disabled, so a "//# sourceMappingURL=" comment cannot make the
// process read a file.
//
// Compile is safe for concurrent use.
func Compile(name, script string, opts CompileOptions) (*Program, error) {
	compiles.Add(1)
	configureRegexp()
	if opts.LineOffset < 0 || opts.ColumnOffset < 0 {
		return nil, fmt.Errorf("compile %s: negative offset", name)
	}
	if line, col, err := checkSource(script); err != nil {
		// Placed like any other position in the script: the offsets
		// only (the limits hold for the source, before any compiler).
		return nil, diag.ErrorList{{Pos: diag.Position{File: name, Line: line + opts.LineOffset, Col: col + opts.ColumnOffset}, Msg: err.Error(), Err: err}}
	}
	p := &Program{name: name, colOffset: opts.ColumnOffset}
	// Leading newlines put goja's own line numbers (also those a script
	// sees in err.stack) on the file's lines; columns are shifted when
	// positions are reported, see position.
	src := strings.Repeat("\n", opts.LineOffset) + script
	if p.colOffset > 0 {
		lines := strings.Split(src, "\n")
		p.empty = make([]bool, len(lines))
		for i, l := range lines {
			p.empty[i] = strings.TrimRight(l, "\r") == ""
		}
	}
	if opts.TypeScript {
		// The JavaScript has lines of its own; the source map, then the
		// line offset, place its positions in the file.
		p.lineOffset = opts.LineOffset
		js, err := p.transpile(script)
		if err != nil {
			return nil, err
		}
		src = js
	}

	// goja.Parse folds the parser's ErrorList into one message without
	// positions; parser.ParseFile, which parse calls, keeps them.
	tree, err := parse(name, src)
	if err != nil {
		return nil, p.parseError(err, src)
	}
	ids := declaredNames(tree)
	problems, compilable := p.checkTree(tree, ids)
	if !compilable {
		// goja compiles regular expression literals with the script,
		// and cannot be interrupted.
		problems.Sort()
		return nil, problems
	}
	prg, err := goja.CompileAST(tree, true)
	if err != nil {
		// goja stops at its first error, which may be one of the
		// problems already found.
		for _, e := range p.compileError(err) {
			if !slices.ContainsFunc(problems, func(f *diag.Error) bool { return f.Pos == e.Pos }) {
				problems = append(problems, e)
			}
		}
	}
	if len(problems) > 0 {
		problems.Sort()
		return nil, problems
	}
	p.prg = prg
	p.reads = p.readPaths(tree)
	p.onces = p.onceCalls(tree)
	p.unused = unusedArgsOf(tree)

	var refs [event.NumTypes]string
	for i := range refs {
		refs[i] = "undefined"
	}
	for _, id := range ids {
		name := id.Name.String()
		p.declared = append(p.declared, Declaration{Name: name, Pos: p.position(tree.File.Position(int(id.Idx) - tree.File.Base()))})
		for i, t := range event.Types() {
			if h := t.Handler(); name == h {
				p.handlers[i] = true
				refs[i] = h
			}
		}
	}
	p.lookup, err = goja.Compile("<kreact>", "["+strings.Join(refs[:], ",")+"]", true)
	if err != nil {
		return nil, fmt.Errorf("compile %s: handler lookup: %w", name, err)
	}
	return p, nil
}

// declaredNames lists the identifiers declared at the top level of a
// script.
func declaredNames(tree *ast.Program) []*ast.Identifier {
	var ids []*ast.Identifier
	addBindings := func(list []*ast.Binding) {
		for _, b := range list {
			if id, ok := b.Target.(*ast.Identifier); ok {
				ids = append(ids, id)
			}
		}
	}
	for _, st := range tree.Body {
		switch st := st.(type) {
		case *ast.FunctionDeclaration:
			if st.Function.Name != nil {
				ids = append(ids, st.Function.Name)
			}
		case *ast.VariableStatement:
			addBindings(st.List)
		case *ast.LexicalDeclaration:
			addBindings(st.List)
		}
	}
	return ids
}

// Declaration is a name a script declares at its top level.
type Declaration struct {
	Name string
	Pos  diag.Position
}

// Declarations returns the names the script declares at its top level (as
// a function, var, let or const), in source order, with where they are in
// the file; for `kreact validate` to point at a misspelt handler.
func (p *Program) Declarations() []Declaration { return p.declared }

// parseError turns the parser's errors in src into the script's.
func (p *Program) parseError(err error, src string) error {
	var list parser.ErrorList
	if !errors.As(err, &list) || len(list) == 0 {
		return diag.ErrorList{p.newError(file.Position{Filename: p.name, Line: 1, Column: 1}, err.Error())}
	}
	list.Sort()
	out := make(diag.ErrorList, 0, len(list))
	in := lines{src: src}
	for _, e := range list {
		msg := e.Message
		if msg == reservedWord {
			msg = moduleError(in.rest(e.Position))
		}
		se := p.newError(e.Position, msg)
		if n := len(out); n > 0 && (*out[n-1] == *se || se.Msg == "Unexpected end of input") {
			// After an error the parser often runs on to the end of
			// the input; that second error is only an echo.
			continue
		}
		out = append(out, se)
	}
	return out
}

func (p *Program) compileError(err error) diag.ErrorList {
	var se *goja.CompilerSyntaxError
	if errors.As(err, &se) && se.File != nil {
		return diag.ErrorList{p.newError(se.File.Position(se.Offset), se.Message)}
	}
	return diag.ErrorList{{Pos: diag.Position{File: p.name, Line: 1, Col: 1 + p.colOffset}, Msg: err.Error(), Err: err}}
}

func (p *Program) newError(pos file.Position, msg string) *diag.Error {
	at := p.position(pos)
	if at.File == p.name && at.Line < 1 {
		// A position of JavaScript that the source map leads nowhere
		// (code esbuild added): a compile error still needs a place,
		// the script's start.
		at.Line, at.Col = p.lineOffset+1, p.colOffset+1
	}
	return &diag.Error{Pos: at, Msg: msg}
}

// adjust moves a position of this program's code by the column offset.
// Positions of other code (eval) are left as they are.
func (p *Program) adjust(pos file.Position) file.Position {
	if pos.Filename == p.name && p.sourceMap != nil {
		_, _, line, col, ok := p.sourceMap.Source(pos.Line, pos.Column-1)
		if !ok {
			// Code esbuild added (a helper for lowered syntax):
			// there is no TypeScript line to show.
			return file.Position{Filename: p.name}
		}
		pos.Line, pos.Column = line-tsLead+p.lineOffset, col+1
	}
	if pos.Filename == p.name && pos.Line > 0 && pos.Line <= len(p.empty) && !p.empty[pos.Line-1] {
		pos.Column += p.colOffset
	}
	if pos.Filename == "" {
		pos.Filename = "<eval>"
	}
	return pos
}

// position returns where pos of this program's code is in the file the
// user edits.
func (p *Program) position(pos file.Position) diag.Position {
	pos = p.adjust(pos)
	return diag.Position{File: pos.Filename, Line: pos.Line, Col: pos.Column}
}
