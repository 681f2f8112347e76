package rules

import (
	"github.com/kreact/kreact/diag"
)

// Errors returns what keeps rule r from running (its script does not
// compile, a resource it names does not resolve, its handlers do not fit
// its events) as a diag.ErrorList, one positioned problem per error of
// err, each naming the rule in its Position.Rule and worded as `kreact
// validate` words it. An error without a position is placed at the rule.
// The errors of err are copied, not changed.
func (r *Rule) Errors(err error) diag.ErrorList {
	var list diag.ErrorList
	list.AddError(r.Pos, err)
	for i, e := range list {
		c := *e
		c.Pos.Rule = r.Name
		list[i] = &c
	}
	return list
}
