package scripting

import (
	"fmt"

	"github.com/evanw/esbuild/pkg/api"
	"github.com/go-sourcemap/sourcemap"
	"github.com/kreact/kreact/source"
)

// transpile turns a TypeScript rule script into JavaScript with esbuild,
// inside this process (no Node toolchain), and returns the source map that
// leads positions in the JavaScript back to the TypeScript. Types are
// removed, not checked: esbuild has no type checker.
//
// Top-level declarations stay top-level declarations (no module format),
// so the handlers are found as in a JavaScript script. Syntax newer than
// ES2020 is lowered to what goja runs.
func (p *Program) transpile(script string) (string, error) {
	res := api.Transform(script, api.TransformOptions{
		Loader:     api.LoaderTS,
		Sourcefile: p.name,
		Sourcemap:  api.SourceMapExternal,
		Target:     api.ES2020,
		LogLevel:   api.LogLevelSilent,
		// A script cannot reach files, and neither can its compilation.
		TsconfigRaw: `{"compilerOptions": {}}`,
	})
	if len(res.Errors) > 0 {
		var list source.ErrorList
		for _, m := range res.Errors {
			pos := source.Position{File: p.name, Line: 1, Col: 1}
			if l := m.Location; l != nil {
				pos.Line = l.Line + p.lineOffset
				pos.Col = l.Column + 1
				if pos.Line-1 < len(p.empty) && !p.empty[pos.Line-1] {
					pos.Col += p.colOffset
				}
			}
			list.Add(pos, m.Text)
		}
		return "", list
	}
	sm, err := sourcemap.Parse(p.name+".map", res.Map)
	if err != nil {
		return "", fmt.Errorf("compile %s: source map: %w", p.name, err)
	}
	p.sourceMap = sm
	return string(res.Code), nil
}
