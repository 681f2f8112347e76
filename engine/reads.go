package engine

import (
	"fmt"
	"strings"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/projection"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// CheckReads warns about the paths the rule's handlers visibly read of
// their objects (scripting.Program.ReadPaths) that the fields of its
// informers (delivery.Plan, from spec.watch[].fields) do not keep: under
// kreact run they are undefined, and `kreact test` fails the case that
// reads them. It says nothing unless every spec.watch entry of the rule
// has fields, and about handlers that spec.events never calls. Each
// warning is at the start of the chain that reads the path
// (scripting.ReadPath.Pos, where kreact test places the same read), and
// names it up to the first key that is dropped (scripting.ReadName);
// `kreact validate` shows them, kreact run logs them when the rule
// starts.
func CheckReads(res *rules.Resolved, prog *scripting.Program) diag.ErrorList {
	r := res.Rule
	if prog == nil || len(res.Watch) == 0 {
		return nil
	}
	// What the handlers can see of their objects: the union of what the
	// informers of the spec.watch entries keep.
	var kept projection.Fields
	first := true
	for _, inf := range delivery.Plan(res) {
		if !inf.Handled {
			continue
		}
		if inf.Fields.Whole() {
			return nil
		}
		if first {
			kept, first = inf.Fields, false
		} else {
			kept = kept.Union(inf.Fields)
		}
	}
	var where string
	if len(r.Watch) == 1 {
		where = fmt.Sprintf("spec.watch[0].fields (at %s) does not keep", r.Watch[0].FieldsPos.LineCol())
	} else {
		at := make([]string, len(r.Watch))
		for i, w := range r.Watch {
			at[i] = w.FieldsPos.LineCol()
		}
		where = fmt.Sprintf("no spec.watch[].fields (at %s) keeps", strings.Join(at, ", "))
	}
	var out diag.ErrorList
	seen := map[string]bool{}
	for _, read := range prog.ReadPaths() {
		if !called(r, read.Handler) {
			continue
		}
		for n := 1; n <= len(read.Path); n++ {
			p := read.Path[:n]
			if kept.Reaches(p) {
				continue
			}
			what := read.Handler + " reads " + scripting.ReadName(read.Param, p)
			if !seen[what] {
				seen[what] = true
				pos := read.Pos
				pos.Rule = r.Name
				out.Warnf(pos, "rule %s: %s, which %s: it is undefined under kreact run", diag.Quote(r.Name), what, where)
			}
			break
		}
	}
	return out
}

// called reports whether the rule's handler of that name may be called.
func called(r *rules.Rule, handler string) bool {
	for _, t := range event.Types() {
		if t.Handler() == handler {
			return t == event.Timer || t == event.Tick || r.Handles(t)
		}
	}
	return false
}
