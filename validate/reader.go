package validate

import (
	"context"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/lifecycle"
	"github.com/kreact/kreact/rules"
)

// Reader is kreact run's engine.Reader, at start and at each reload:
// Check, the one check of every command, against the resources of stack
// (with opts.WaitForResources set: a CRD not installed yet is waited for)
// and the webhooks of opts.Admission. A resource that discovery does not
// know is looked up again (clientstack.Stack.Refresh) before it is
// called a typo: a CRD created a moment ago may not be in its snapshot
// yet. A read ends when ctx does, even while Check runs
// (lifecycle.Interruptible).
func Reader(stack *clientstack.Stack, opts Options) engine.Reader {
	opts.WaitForResources = true
	return func(ctx context.Context, what string, paths []string) (engine.RuleFiles, error) {
		return lifecycle.Interruptible(ctx, what, func() engine.RuleFiles {
			since := engine.Fingerprint(paths)
			res, err := lookingUpAgain(ctx, stack, func() (*Result, error) { return Check(ctx, paths, stack.Mapper, opts) })
			if err != nil {
				return engine.RuleFiles{} // ctx ended: Interruptible returns its error
			}
			files := res.RuleFiles()
			files.Since = since
			return files
		})
	}
}

// ObjectChecker is the admission server's check of rule objects with
// --admission-validate-rules: CheckObject, the checks of kreact validate,
// against the resources of stack and the webhooks of opts.Admission, so
// that the API server refuses what kreact validate reports, in its words.
// A resource that discovery does not know is looked up again before it
// is called unknown, as Reader does: the CRD applied a moment before the
// rule may not be in its snapshot yet. A team's Rule is held to limits
// (the --tenant-* flags) as package ruleobjects holds it when it loads,
// so that what is admitted runs.
func ObjectChecker(stack *clientstack.Stack, opts Options, limits rules.TenantLimits) admission.RuleObjectChecker {
	return func(ctx context.Context, content map[string]any) (diag.ErrorList, error) {
		res, err := lookingUpAgain(ctx, stack, func() (*Result, error) { return CheckObject(ctx, content, stack.Mapper, opts) })
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

// lookingUpAgain runs check, and once more if it found a resource that
// discovery does not know and stack's discovery answers when asked again:
// a CRD created a moment ago may not be in its snapshot yet.
func lookingUpAgain(ctx context.Context, stack *clientstack.Stack, check func() (*Result, error)) (*Result, error) {
	res, err := check()
	if err == nil && res.NotFound && stack.Refresh(ctx) {
		res, err = check()
	}
	return res, err
}
