package engine

import (
	"errors"
	"fmt"

	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// RuleError is what keeps one rule from running: its script does not
// compile, or a resource it names does not resolve. Err is a
// rules.ErrorList, one "file:line:col: message" per problem, worded as
// `kreact validate` words them; Error returns those lines.
type RuleError struct {
	Rule string
	Err  error
}

func (e *RuleError) Error() string { return e.Err.Error() }
func (e *RuleError) Unwrap() error { return e.Err }

// scriptErrors turns a compile error into positioned problems.
func scriptErrors(r *rules.Rule, err error) rules.ErrorList {
	var out rules.ErrorList
	var list scripting.ErrorList
	var one *scripting.Error
	switch {
	case errors.As(err, &list):
		for _, e := range list {
			out.Addf(rules.Position{File: e.File, Line: e.Line, Col: e.Col}, "rule %s: script: %s", rules.Quote(r.Name), e.Message)
		}
	case errors.As(err, &one):
		out.Addf(rules.Position{File: one.File, Line: one.Line, Col: one.Col}, "rule %s: script: %s", rules.Quote(r.Name), one.Message)
	default:
		out.Add(r.Pos, fmt.Sprintf("rule %s: script: %v", rules.Quote(r.Name), err))
	}
	return out
}
