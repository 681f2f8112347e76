package scripting

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"

	"github.com/kreact/kreact/diag"
)

// tsLead is the number of empty lines put before a TypeScript script; see
// transpile.
const tsLead = 1

// transpile turns a TypeScript rule script into JavaScript with esbuild,
// inside this process (no Node toolchain), and returns the source map that
// leads positions in the JavaScript back to the TypeScript. Types are
// removed, not checked: esbuild has no type checker.
//
// Top-level declarations stay top-level declarations (no module format),
// so the handlers are found as in a JavaScript script; the `export` of an
// exported one stays too, and Compile ignores it as in JavaScript. Syntax newer than
// ES2020 is lowered to what goja runs.
//
// The TypeScript is transpiled after one empty line (tsLead), and the
// positions of both the errors and the source map are moved back by it:
// go-sourcemap drops a mapping to the very first character of a source,
// which left code there (a top-level "return" as the first word)
// without a position, or without a source map at all.
func (p *Program) transpile(script string) (string, error) {
	res := api.Transform(strings.Repeat("\n", tsLead)+script, api.TransformOptions{
		Loader:     api.LoaderTS,
		Sourcefile: p.name,
		Sourcemap:  api.SourceMapExternal,
		Target:     api.ES2020,
		LogLevel:   api.LogLevelSilent,
		// A script cannot reach files, and neither can its compilation.
		TsconfigRaw: `{"compilerOptions": {}}`,
	})
	if len(res.Errors) > 0 {
		var list diag.ErrorList
		for _, m := range res.Errors {
			pos := diag.Position{File: p.name, Line: 1, Col: 1}
			if l := m.Location; l != nil {
				pos.Line = l.Line - tsLead + p.lineOffset
				pos.Col = l.Column + 1
				if pos.Line-1 < len(p.empty) && !p.empty[pos.Line-1] {
					pos.Col += p.colOffset
				}
			}
			list.Add(pos, m.Text)
		}
		return "", list
	}
	var m struct {
		Mappings string `json:"mappings"`
	}
	if err := json.Unmarshal(res.Map, &m); err == nil && m.Mappings == "" {
		// Nothing to map (and a map without mappings does not parse):
		// only types and comments, which leave no code, or only
		// directives ("use strict"), which cannot fail at a position.
		return string(res.Code), nil
	}
	sm, err := sourcemap.Parse(p.name+".map", res.Map)
	if err != nil {
		return "", fmt.Errorf("compile %s: source map: %w", p.name, err)
	}
	p.sourceMap = sm
	return string(res.Code), nil
}
