package engine

import (
	"fmt"
	"strings"

	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
	"github.com/kreact/kreact/source"
)

// CheckHandlers checks the script's handlers against spec.events,
// spec.every and spec.schedule. The errors (a rule that would never run,
// spec.every or spec.schedule without onTick) keep a rule from loading,
// in Load as in `kreact validate`; the warnings (Error.Warning) are for
// validate only. Every problem is at the rule's position.
func CheckHandlers(r *rules.Rule, prog *scripting.Program) source.ErrorList {
	var out source.ErrorList
	pos := r.Pos
	pos.Rule = r.Name
	add := func(warning bool, format string, args ...any) {
		out = append(out, &source.Error{Pos: pos, Warning: warning, Msg: fmt.Sprintf("rule %s: ", source.Quote(r.Name)) + fmt.Sprintf(format, args...)})
	}
	runs := false
	var unhandled []scripting.EventType
	for _, e := range r.Events {
		if prog.HasHandler(e) {
			runs = true
		} else {
			unhandled = append(unhandled, e)
		}
	}
	hasTick := prog.HasHandler(scripting.Tick)
	switch {
	case r.Every > 0 && !hasTick:
		add(false, "spec.every is %v but the script declares no onTick(ctx)", r.Every)
	case r.Schedule != "" && !hasTick:
		add(false, "spec.schedule is %s but the script declares no onTick(ctx)", source.Quote(r.Schedule))
	case r.Ticks():
		runs = true
	case hasTick:
		add(true, "onTick is never called: set spec.every or spec.schedule")
	}
	if !runs && len(unhandled) > 0 {
		names := make([]string, len(unhandled))
		events := make([]string, len(unhandled))
		for i, e := range unhandled {
			names[i] = e.Handler()
			events[i] = string(e)
		}
		which := "no " + names[0]
		if len(names) > 1 {
			which = "none of " + strings.Join(names, ", ")
		}
		add(false, "the rule never runs: spec.events lists %s but the script declares %s",
			strings.Join(events, ", "), which)
	} else {
		for _, e := range unhandled {
			add(true, "spec.events lists %s but the script declares no %s; %s events are ignored",
				e, e.Handler(), e)
		}
	}
	for _, e := range rules.AllEvents() {
		if !r.Handles(e) && prog.HasHandler(e) {
			add(true, "%s is never called: spec.events does not list %s", e.Handler(), e)
		}
	}
	return out
}

// handlerErrors returns the errors of CheckHandlers, without its
// warnings, or nil.
func handlerErrors(r *rules.Rule, prog *scripting.Program) error {
	return CheckHandlers(r, prog).Errors().Err()
}
