package engine

import (
	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// CheckOnce returns an error at each kreact.once call of a rule that may
// not patch every object it watches: the call marks the object of its
// handler with a patch (event.OncePatch), which the rule's permissions
// must allow wherever it watches. kreact run refuses such a call when it
// is made; validate and test refuse the rule before.
func CheckOnce(res *rules.Resolved, prog *scripting.Program) diag.ErrorList {
	if prog == nil {
		return nil
	}
	calls := prog.OnceCalls()
	if len(calls) == 0 {
		return nil
	}
	var refused error
	for _, w := range res.Watch {
		namespaces := w.Watch.Namespaces
		if len(namespaces) == 0 || !w.Resource.Namespaced {
			namespaces = []string{""}
		}
		for _, ns := range namespaces {
			if err := res.Allows(actions.Patch, w.Resource.GVR, ns); err != nil && refused == nil {
				refused = err
			}
		}
	}
	if refused == nil {
		return nil
	}
	var out diag.ErrorList
	for _, pos := range calls {
		pos.Rule = res.Rule.Name
		out = append(out, &diag.Error{Pos: pos, Msg: "kreact.once marks the object of its handler with a patch: " + refused.Error()})
	}
	return out
}
