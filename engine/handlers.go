package engine

import (
	"fmt"
	"strings"

	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// HandlerProblem is an error or a warning about a script's handlers
// against its rule's spec.events, spec.every and spec.schedule.
type HandlerProblem struct {
	Pos     rules.Position
	Msg     string
	Warning bool
}

// CheckHandlers checks the script's handlers against spec.events,
// spec.every and spec.schedule. The errors (a rule that would never run,
// spec.every or spec.schedule without onTick) keep a rule from loading,
// in Load as in `kreact validate`; the warnings are for validate only.
func CheckHandlers(r *rules.Rule, prog *scripting.Program) []HandlerProblem {
	var out []HandlerProblem
	add := func(warning bool, format string, args ...any) {
		out = append(out, HandlerProblem{Pos: r.Pos, Warning: warning, Msg: fmt.Sprintf("rule %s: ", rules.Quote(r.Name)) + fmt.Sprintf(format, args...)})
	}
	runs := false
	var unhandled []rules.Event
	for _, e := range r.Events {
		if prog.HasHandler(scripting.EventType(e)) {
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
		add(false, "spec.schedule is %s but the script declares no onTick(ctx)", rules.Quote(r.Schedule))
	case r.Ticks():
		runs = true
	case hasTick:
		add(true, "onTick is never called: set spec.every or spec.schedule")
	}
	if !runs && len(unhandled) > 0 {
		names := make([]string, len(unhandled))
		events := make([]string, len(unhandled))
		for i, e := range unhandled {
			names[i] = scripting.EventType(e).Handler()
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
				e, scripting.EventType(e).Handler(), e)
		}
	}
	for _, e := range rules.AllEvents() {
		if !r.Handles(e) && prog.HasHandler(scripting.EventType(e)) {
			add(true, "%s is never called: spec.events does not list %s", scripting.EventType(e).Handler(), e)
		}
	}
	return out
}

// handlerErrors returns the errors of CheckHandlers as a RuleError, or nil.
func handlerErrors(r *rules.Rule, prog *scripting.Program) error {
	var list rules.ErrorList
	for _, p := range CheckHandlers(r, prog) {
		if !p.Warning {
			list.Add(p.Pos, p.Msg)
		}
	}
	if len(list) == 0 {
		return nil
	}
	return &RuleError{Rule: r.Name, Err: list}
}
