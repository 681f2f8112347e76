package engine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/projection"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// CheckIgnored warns about a rule that calls onUpdate only (spec.events
// [update]) whose spec.ignoreChanges swallows the changes it is there
// for, so that the rule stays silent with nothing in the log:
//
//   - every path its informers keep (every spec.watch entry has fields)
//     is under an ignored path: onUpdate is never called;
//   - every path onUpdate visibly reads (scripting.Program.ReadPaths),
//     but the object's name, namespace and uid, is under an ignored
//     path: a change to what it reads never calls it.
//
// The warning is at the first spec.ignoreChanges entry involved. Rules
// that handle adds or deletes, or whose objects are whole and whose
// reads are not all ignored, get nothing: which of their changes are
// ignored depends on the objects.
func CheckIgnored(res *rules.Resolved, prog *scripting.Program) diag.ErrorList {
	r := res.Rule
	if len(r.IgnoreChanges) == 0 || !slices.Equal(r.Events, []event.Type{event.Update}) || prog == nil || !prog.HasHandler(event.Update) {
		return nil
	}
	var out diag.ErrorList
	warn := func(entry int, format string, args ...any) {
		pos := r.Pos
		if entry < len(r.IgnoreChangesPos) {
			pos = r.IgnoreChangesPos[entry]
		}
		pos.Rule = r.Name
		out.Warnf(pos, "rule %s: %s", diag.Quote(r.Name), fmt.Sprintf(format, args...))
	}
	if entry, ok := ignoresAllKept(r, res); ok {
		warn(entry, "spec.ignoreChanges swallows every change onUpdate could see (spec.events lists update only, and spec.watch[].fields keeps only ignored paths): onUpdate is never called")
		return out
	}
	var reads []string
	first := -1
	for _, read := range prog.ReadPaths() {
		if read.Handler != event.Update.Handler() || identityRead(read.Path) {
			continue
		}
		entry := ignoredBy(r.IgnoreChanges, read.Path)
		if entry < 0 {
			return out
		}
		if first < 0 || entry < first {
			first = entry
		}
		reads = append(reads, scripting.ReadName(read.Param, read.Path))
	}
	if first >= 0 {
		slices.Sort(reads)
		warn(first, "every path onUpdate reads (%s) is under spec.ignoreChanges, so a change to them never calls it (spec.events lists update only); narrow spec.ignoreChanges if onUpdate is meant to see them", strings.Join(slices.Compact(reads), ", "))
	}
	return out
}

// ignoresAllKept reports whether every spec.watch entry keeps fields and
// every path they keep, that an update may change, is under an ignored
// path; entry is the first ignoreChanges entry involved.
func ignoresAllKept(r *rules.Rule, res *rules.Resolved) (entry int, ok bool) {
	entry = len(r.IgnoreChanges)
	for _, inf := range delivery.Plan(res) {
		if !inf.Handled {
			continue
		}
		if inf.Fields.Whole() {
			return 0, false
		}
		kept := append(inf.Fields.Paths(), projection.Identity...)
		for _, p := range kept {
			if identityRead(p) || (len(p) == 1 && (p[0] == "apiVersion" || p[0] == "kind")) || slices.Equal(p, projection.Path{"metadata", "resourceVersion"}) {
				continue
			}
			i := ignoredBy(r.IgnoreChanges, p)
			if i < 0 {
				return 0, false
			}
			entry = min(entry, i)
		}
	}
	return entry, entry < len(r.IgnoreChanges)
}

// identityRead reports whether p is the object's name, namespace or uid,
// which an update never changes.
func identityRead(p projection.Path) bool {
	return len(p) == 2 && p[0] == "metadata" && (p[1] == "name" || p[1] == "namespace" || p[1] == "uid")
}

// ignoredBy returns the index of the first ignored path that p is at or
// under, or -1.
func ignoredBy(ignored []rules.FieldPath, p projection.Path) int {
	for i, q := range ignored {
		if len(q) <= len(p) && slices.Equal([]string(q), []string(p[:len(q)])) {
			return i
		}
	}
	return -1
}
