package engine

import (
	"errors"
	"fmt"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// CheckOptions say what CheckRule checks a rule against besides the
// resources it resolves with.
type CheckOptions struct {
	// Admission is the configuration of the webhooks that serve the
	// rules' admission handlers (admission.Check): a rule that watches a
	// namespace they never intercept is an error. The zero value leaves
	// out kube-system only.
	Admission admission.Options
	// WaitForResources makes a resource that the resolver does not know,
	// and that is no misspelling of one it knows
	// (restmapper.NotFoundError.Misspelt), a CRD not installed yet, which
	// the rule waits for (Checked.Waiting), as kreact run does, rather
	// than an error.
	WaitForResources bool
}

// Checked is what CheckRule found of a rule.
type Checked struct {
	// Program is the rule's compiled script, nil if it does not compile.
	Program *scripting.Program
	// Resolved is the rule resolved; nil if its resources do not
	// resolve, or while it waits for them.
	Resolved *rules.Resolved
	// Waiting says why the rule waits for its resources
	// (CheckOptions.WaitForResources), and is empty if it does not.
	Waiting string
	// Problems are its errors, which keep it from running, and its
	// warnings, each at its position and naming the rule.
	Problems diag.ErrorList
	// NotFound is true when a resource the rule names is unknown to the
	// resolver, not only misspelt: a CRD may be missing.
	NotFound bool
}

// Err returns the errors of c, nil if there are none: whether the rule
// may run.
func (c Checked) Err() error { return c.Problems.Errors().Err() }

// CheckRule is the one check of a rule that every command makes, so that
// what one refuses the others refuse, in the same words: `kreact run`
// (Load), validate, test, record and webhooks. Its script compiles and
// its handlers fit (scripting.CheckScript); its resources resolve with m
// (unless it waits for them: opts.WaitForResources); what kreact.once
// marks it may patch (CheckOnce); what its admission handlers watch,
// the webhooks of opts.Admission can send them (admission.Check).
// Warnings come with the errors: what the handlers read that
// spec.watch[].fields drops (CheckReads), an spec.ignoreChanges that
// swallows what onUpdate sees (CheckIgnored). Every problem is reported
// at once: the resources of a rule whose script does not compile are
// resolved all the same.
func CheckRule(r *rules.Rule, m apiresource.Resolver, opts CheckOptions) Checked {
	var c Checked
	c.Program, c.Problems = scripting.CheckScript(r)
	if opts.WaitForResources {
		if c.Waiting = waitsFor(r, m, false); c.Waiting != "" {
			return c
		}
	}
	res, err := r.Resolve(m)
	if err != nil {
		c.Problems = append(c.Problems, r.Errors(err)...)
		c.NotFound = waitsFor(r, m, true) != ""
		return c
	}
	c.Resolved = res
	c.Problems = append(c.Problems, CheckReads(res, c.Program)...)
	c.Problems = append(c.Problems, CheckIgnored(res, c.Program)...)
	c.Problems = append(c.Problems, CheckOnce(res, c.Program)...)
	c.Problems = append(c.Problems, admission.Check(res, c.Program, opts.Admission)...)
	return c
}

// refs returns every resource reference of r: what it watches, reads
// and may act on.
func refs(r *rules.Rule) []rules.Ref {
	out := make([]rules.Ref, 0, len(r.Watch)+len(r.Reads))
	for _, w := range r.Watch {
		out = append(out, rules.Ref{Name: w.Resource, Pos: w.Pos})
	}
	out = append(out, r.Reads...)
	for _, p := range r.Permissions {
		out = append(out, p.Resources...)
	}
	return out
}

// waitsFor returns where and why r names a resource that m does not know,
// that is not a misspelling of one it knows (or any unknown one, with
// typos): a CRD not installed yet; empty if there is none.
func waitsFor(r *rules.Rule, m apiresource.Resolver, typos bool) string {
	for _, ref := range refs(r) {
		if _, err := m.Resolve(ref.Name); err != nil {
			var nf *restmapper.NotFoundError
			if errors.As(err, &nf) && (typos || !nf.Misspelt()) {
				return fmt.Sprintf("%s: %v", ref.Pos, err)
			}
		}
	}
	return ""
}
