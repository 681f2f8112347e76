package diag

import "log/slog"

// Log logs each problem of a joined or listed error (Problems) on a line
// of its own, so that every file:line:col stands out, worded as `kreact
// validate` prints it; a problem of one rule has the rule's name as the
// rule attribute.
func Log(logger *slog.Logger, msg string, err error) {
	for _, p := range Problems(err) {
		if e, ok := p.(*Error); ok && e.Pos.Rule != "" {
			logger.Error(msg, "rule", e.Pos.Rule, "error", e.Error())
		} else {
			logger.Error(msg, "error", p.Error())
		}
	}
}

// Problems returns the problems of err one by one: the *Errors of an
// ErrorList, and the errors joined in err (Unwrap() []error), at any
// depth; an error of another kind is one problem. nil has none.
func Problems(err error) []error {
	var out []error
	var visit func(err error)
	visit = func(err error) {
		switch e := err.(type) {
		case nil:
		case ErrorList:
			for _, x := range e {
				visit(x)
			}
		case *Error:
			out = append(out, e)
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				visit(x)
			}
		default:
			out = append(out, err)
		}
	}
	visit(err)
	return out
}
