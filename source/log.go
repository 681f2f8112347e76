package source

import "log/slog"

// Log logs each problem of a joined or listed error on a line of
// its own, so that every file:line:col stands out, worded as `kreact
// validate` prints it; a problem of one rule has the rule's name as the
// rule attribute.
func Log(logger *slog.Logger, msg string, err error) {
	if err == nil {
		return
	}
	var visit func(err error)
	visit = func(err error) {
		switch e := err.(type) {
		case ErrorList:
			for _, x := range e {
				visit(x)
			}
		case *Error:
			if e.Pos.Rule != "" {
				logger.Error(msg, "rule", e.Pos.Rule, "error", e.Error())
			} else {
				logger.Error(msg, "error", e.Error())
			}
		case interface{ Unwrap() []error }:
			for _, x := range e.Unwrap() {
				visit(x)
			}
		default:
			logger.Error(msg, "error", err.Error())
		}
	}
	visit(err)
}
