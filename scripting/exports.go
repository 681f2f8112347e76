package scripting

import (
	"regexp"
	"strings"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/file"
	"github.com/dop251/goja/parser"
)

// A rule script is a script, not a module: goja runs no modules, and the
// handlers are its top-level declarations. Yet tsc checks files without
// import or export as one global scope, where the helpers of two rules
// checked together clash; `export function onAdd` makes each file a module
// of its own. So Compile accepts `export` before a top-level function,
// class, const, let or var, and ignores it. Export lists, export default,
// export from and import stay errors (parseError says why).
//
// goja's parser has no module syntax, so the keyword is blanked out, with
// spaces: every offset stays where it was, in the script and in the
// TypeScript source map. What looks like the keyword is only a candidate
// (it could sit in a template literal or a comment): parse verifies each
// against the tree it gets.

// exportCandidate matches `export` before a declaration keyword, not after
// a character that would make it part of a longer name, a private name or
// a property. Group 1 is the keyword, group 2 the declaration's first.
var exportCandidate = regexp.MustCompile(`(?:^|[^\p{L}\p{N}_$#.\\])(export)\s+(async\s+function|function|class|const|let|var)\b`)

// parse parses src, which is named name, with the `export` of exported
// top-level declarations ignored.
func parse(name, src string) (*ast.Program, error) {
	tree, err := parser.ParseFile(nil, name, src, 0, parser.WithDisableSourceMaps)
	if err == nil {
		// Ordinary scripts, which have no export, pay for nothing more.
		return tree, nil
	}
	type candidate struct{ export, decl int }
	var cands []candidate
	for _, m := range exportCandidate.FindAllStringSubmatchIndex(src, -1) {
		cands = append(cands, candidate{export: m[2], decl: m[4]})
	}
	if len(cands) == 0 {
		return nil, err
	}
	blank := func(cands []candidate) string {
		b := []byte(src)
		for _, c := range cands {
			copy(b[c.export:], "      ")
		}
		return string(b)
	}
	tree, err = parser.ParseFile(nil, name, blank(cands), 0, parser.WithDisableSourceMaps)
	if err != nil {
		// Blanking text inside a literal or a comment changes no
		// token, so these are the script's own errors, without those
		// of the exports it may have.
		return nil, err
	}
	// A real candidate is followed by a top-level declaration; text in
	// a literal or a comment is not, and is put back.
	decls := map[int]bool{}
	for _, st := range tree.Body {
		switch st.(type) {
		case *ast.FunctionDeclaration, *ast.ClassDeclaration, *ast.LexicalDeclaration, *ast.VariableStatement:
			decls[int(st.Idx0())-tree.File.Base()] = true
		}
	}
	var real []candidate
	for _, c := range cands {
		if decls[c.decl] {
			real = append(real, c)
		}
	}
	if len(real) == len(cands) {
		return tree, nil
	}
	return parser.ParseFile(nil, name, blank(real), 0, parser.WithDisableSourceMaps)
}

// reservedWord is goja's message for a reserved word where it cannot be;
// `export` and `import` are only that to it.
const reservedWord = "Unexpected reserved word"

// moduleError explains goja's reservedWord error when the word, which
// starts rest, is `export` or `import`.
func moduleError(rest string) string {
	switch {
	case hasWord(rest, "export"):
		return "a rule script is not a module: export is only allowed before a top-level function, class, const, let or var (no export lists, export default or export from)"
	case hasWord(rest, "import"):
		return "a rule script is not a module and cannot import: everything outside it is reached through kreact"
	}
	return reservedWord
}

// lines finds positions of the parser's errors in src; they come sorted,
// so it goes through src once.
type lines struct {
	src       string
	line, off int // off is where line (1-based) starts
}

// rest returns src from pos, a line and a byte column, on.
func (l *lines) rest(pos file.Position) string {
	if l.line == 0 || pos.Line < l.line {
		l.line, l.off = 1, 0
	}
	for ; l.line < pos.Line; l.line++ {
		i := strings.IndexByte(l.src[l.off:], '\n')
		if i < 0 {
			return ""
		}
		l.off += i + 1
	}
	if pos.Column < 1 || l.off+pos.Column-1 > len(l.src) {
		return ""
	}
	return l.src[l.off+pos.Column-1:]
}

// hasWord reports whether s starts with the word w.
func hasWord(s, w string) bool {
	if !strings.HasPrefix(s, w) {
		return false
	}
	if len(s) == len(w) {
		return true
	}
	c := s[len(w)]
	return !(c == '_' || c == '$' || c == '\\' || c >= 0x80 || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9')
}
