package scripting

import (
	"fmt"

	"github.com/kreact/kreact/rules"
)

// Limits on a script's source, checked before any parser sees it. goja's
// and esbuild's parsers are recursive descent: each level of nesting is a
// few Go stack frames, and a Go stack overflow is fatal, not a panic, so a
// script nested a million deep would kill the process rather than fail to
// compile. Real rules nest a few dozen levels at most.
const (
	// MaxSourceSize is the largest script, in bytes: a rule's limit
	// (rules.MaxScriptSize).
	MaxSourceSize = rules.MaxScriptSize
	// MaxNesting is how deep a script may nest: brackets, and chains of
	// operators that parse recursively (prefix operators such as !, -,
	// typeof; assignments; ?:; =>).
	MaxNesting = 500
	// MaxJSONNesting bounds the nesting of the text JSON.parse reads.
	MaxJSONNesting = 1000
)

// checkSource refuses a script over MaxSourceSize or nested deeper than
// MaxNesting, with the position where the limit is passed. The scan is
// linear and approximate: it skips comments, strings and template text,
// counts brackets, and counts the right-recursive operators of each
// bracket level until a ; or , ends the expression. It never
// under-counts brackets; a regular expression literal containing a quote
// or a bracket can make it over-count, which only matters for a script
// close to the limit.
func checkSource(source string) (line, col int, err error) {
	if len(source) > MaxSourceSize {
		return 1, 1, fmt.Errorf("the script is %d bytes, over the limit of %d", len(source), MaxSourceSize)
	}
	type level struct {
		ops      int  // right-recursive operators in the current expression
		template bool // a ${ of a template literal
	}
	levels := []level{{}}
	// total is the sum over levels of 1 + ops, kept as the scan goes so
	// that it stays linear.
	total := 1
	line, col = 1, 0
	i := 0
	next := func() byte {
		c := source[i]
		i++
		if c == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
		return c
	}
	var template func() // scans template text up to ` or ${
	template = func() {
		for i < len(source) {
			c := next()
			switch {
			case c == '\\' && i < len(source):
				next()
			case c == '`':
				return
			case c == '$' && i < len(source) && source[i] == '{':
				next()
				levels = append(levels, level{template: true})
				total++
				return
			}
		}
	}
	for i < len(source) {
		c := next()
		switch {
		case c == '/' && i < len(source) && source[i] == '/':
			for i < len(source) && source[i] != '\n' {
				next()
			}
		case c == '/' && i < len(source) && source[i] == '*':
			next()
			for i < len(source) && !(source[i] == '*' && i+1 < len(source) && source[i+1] == '/') {
				next()
			}
			if i < len(source) {
				next()
				next()
			}
		case c == '"' || c == '\'':
			for i < len(source) {
				d := next()
				if d == '\\' && i < len(source) {
					next()
				} else if d == c || d == '\n' {
					break
				}
			}
		case c == '`':
			template()
		case c == '(' || c == '[' || c == '{':
			levels = append(levels, level{})
			total++
		case c == ')' || c == ']' || c == '}':
			if len(levels) > 1 {
				l := levels[len(levels)-1]
				levels = levels[:len(levels)-1]
				total -= 1 + l.ops
				if c == '}' && l.template {
					template()
				}
			}
		case c == ';' || c == ',':
			total -= levels[len(levels)-1].ops
			levels[len(levels)-1].ops = 0
		case c == '!' || c == '~' || c == '?' || c == '-' || c == '+' || c == '=':
			// Prefix operators count one per character (!!!!x nests);
			// ==, =>, ??= and the like count once.
			levels[len(levels)-1].ops++
			total++
			if c == '=' || c == '?' {
				for i < len(source) && (source[i] == '=' || source[i] == '>' || source[i] == '?' || source[i] == '.') {
					next()
				}
			}
		}
		if total > MaxNesting {
			return line, max(col, 1), fmt.Errorf("the script nests deeper than %d levels (brackets and chained operators)", MaxNesting)
		}
	}
	return 0, 0, nil
}

// jsonShape returns how deep the JSON text s nests, stopping as soon as it
// passes limit, and about how many values it holds (commas and opening
// brackets outside strings, plus one).
func jsonShape(s string, limit int) (deepest int, values int64) {
	depth := 0
	values = 1
	inString := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inString && c == '\\':
			i++
		case c == '"':
			inString = !inString
		case inString:
		case c == '[' || c == '{':
			values++
			depth++
			if depth > deepest {
				deepest = depth
				if deepest > limit {
					return deepest, values
				}
			}
		case c == ']' || c == '}':
			depth--
		case c == ',':
			values++
		}
	}
	return deepest, values
}
