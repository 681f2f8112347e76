package main

import (
	"context"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/validate"
)

// ruleObjectChecker is the admission server's check of rule objects with
// --admission-validate-rules (nil without): validate.CheckObject, the
// checks of kreact validate, against the resources of stack and the
// webhooks of adm, so that the API server refuses what kreact validate
// reports, in its words. A resource that discovery does not know is
// looked up again before it is called unknown, as kreact run's reader
// does: the CRD applied a moment before the rule may not be in its
// snapshot yet. A team's Rule is held to limits (the --tenant-* flags) as
// package ruleobjects holds it when it loads, so that what is admitted
// runs.
func ruleObjectChecker(enabled bool, stack *clientstack.Stack, adm admission.Options, limits rules.TenantLimits) admission.RuleObjectChecker {
	if !enabled {
		return nil
	}
	opts := validate.Options{Admission: adm}
	return func(ctx context.Context, content map[string]any) (diag.ErrorList, error) {
		res, err := validate.CheckObject(ctx, content, stack.Mapper, opts)
		if err == nil && res.NotFound && refreshDiscovery(ctx, stack) {
			res, err = validate.CheckObject(ctx, content, stack.Mapper, opts)
		}
		if err != nil {
			return nil, err
		}
		problems := res.Problems
		for _, r := range res.Rules {
			problems = append(problems, limits.Check(r)...)
			problems = append(problems, admission.TenantCheck(r, limits)...)
		}
		return problems, nil
	}
}
