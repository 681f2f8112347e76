package admission

import (
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// TenantCheck returns the problem of a team's Rule (a rule with a
// Namespace) whose script has admission handlers (onValidate, onMutate)
// that limits do not allow (rules.TenantLimits.Admission), reported as
// rules.TenantLimits.Check reports the others; nil for any other rule, and
// for a script that does not compile, whose errors the engine's check
// reports. Where they are allowed, the handlers' webhooks intercept the
// Rule's namespace only, as its watches do.
func TenantCheck(r *rules.Rule, limits rules.TenantLimits) diag.ErrorList {
	if r.Namespace == "" || limits.Admission {
		return nil
	}
	prog, problems := scripting.CheckScript(r)
	if problems.Errors().Err() != nil || !HandlersOf(prog).Any() {
		return nil
	}
	var errs diag.ErrorList
	errs.Add(diag.Position{Rule: r.Name, File: r.Source}, "spec.script: a Rule in a namespace may not have admission handlers (onValidate, onMutate) unless kreact runs with --tenant-admission")
	return errs
}
