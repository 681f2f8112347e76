package scripting

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/editdistance"
	"github.com/kreact/kreact/rules"
)

// A rule's script, compiled where the rule file places it (CompileRule)
// and checked against the rule (CheckScript): the part of a rule's check
// that needs the script, which package rules, the format alone, leaves
// here. engine.CheckRule, the one check of a rule that every command
// makes, starts with CheckScript.

// CheckScript is the check of a rule that needs no cluster: its script
// compiles (CompileRule) and its handlers fit spec.events, spec.every and
// spec.schedule. engine.CheckRule, which `kreact run` (Load), `kreact
// validate` and `kreact test` all make, starts with it, so that what one
// refuses the others refuse, in the same words.
//
// The problems are errors, which keep the rule from running, and
// warnings (Error.Warning: a handler that is never called, a top-level
// name that is a misspelt handler's), which only validate shows; every
// one names the rule in its Position, and all are reported at once. The
// program is nil when the script does not compile.
func CheckScript(r *rules.Rule) (*Program, diag.ErrorList) {
	prog, err := CompileRule(r)
	if err != nil {
		return nil, r.Errors(err)
	}
	return prog, checkHandlers(r, prog)
}

// checkHandlers checks the script's handlers against spec.events,
// spec.every and spec.schedule: errors for a rule that would never run
// and for spec.every or spec.schedule without onTick, warnings for
// handlers that are never called. Every problem is at the rule's
// position, but for a misspelt handler's name, which is where it is
// declared.
func checkHandlers(r *rules.Rule, prog *Program) diag.ErrorList {
	var out diag.ErrorList
	pos := r.Pos
	pos.Rule = r.Name
	add := func(warning bool, format string, args ...any) {
		out = append(out, &diag.Error{Pos: pos, Warning: warning, Msg: fmt.Sprintf("rule %s: ", diag.Quote(r.Name)) + fmt.Sprintf(format, args...)})
	}
	// spec.events also says which operations reach onValidate and
	// onMutate (package admission): an event without its own handler is
	// then not ignored.
	admits := prog.HasHandler(event.Validate) || prog.HasHandler(event.Mutate)
	runs := admits
	var unhandled []event.Type
	for _, e := range r.Events {
		if prog.HasHandler(e) {
			runs = true
		} else {
			unhandled = append(unhandled, e)
		}
	}
	hasTick := prog.HasHandler(event.Tick)
	switch {
	case r.Every > 0 && !hasTick:
		add(false, "spec.every is %v but the script declares no onTick(ctx)", r.Every)
	case r.Schedule != "" && !hasTick:
		add(false, "spec.schedule is %s but the script declares no onTick(ctx)", diag.Quote(r.Schedule))
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
	} else if !admits {
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
	return append(out, misspeltHandlers(r, prog)...)
}

// misspeltHandlers warns about top-level functions and variables whose
// names are close to a handler's ("onUpate", "onadd"): the engine would
// never call them.
func misspeltHandlers(r *rules.Rule, prog *Program) diag.ErrorList {
	var handlers []string
	for _, t := range event.Types() {
		handlers = append(handlers, t.Handler())
	}
	var out diag.ErrorList
	for _, d := range prog.Declarations() {
		if slices.Contains(handlers, d.Name) {
			continue
		}
		for _, h := range handlers {
			if strings.EqualFold(d.Name, h) || editdistance.AtMost(d.Name, h, 2) <= 2 {
				pos := d.Pos
				pos.Rule = r.Name
				out.Warnf(pos, "rule %s: %s is not a handler and is never called (did you mean %s?)", diag.Quote(r.Name), diag.Shorten(d.Name), h)
				break
			}
		}
	}
	return out
}

// CompileRule compiles a rule's script (Compile) so that positions
// point into the file the script was written in. Its error is a
// diag.ErrorList whose errors name the rule. CheckScript compiles and
// checks a rule the way every command does; CompileRule is the part of
// it that makes the program.
//
// A rule is compiled once (rules.Rule.Compiled): every later call with
// the same *rules.Rule, and the same script, returns the same Program,
// which is immutable and shared by every runtime, and an error list of
// its own (the callers may change it). So the checks of validate and of
// the engine, the admission server and the plans of rbac and Warm share
// one compile of each version of a rule.
func CompileRule(r *rules.Rule) (*Program, error) {
	prog, err := r.Compiled(func() (any, error) {
		opts := CompileOptions{TypeScript: r.ScriptLang == rules.ScriptTypeScript}
		if r.ScriptFile == "" {
			opts.LineOffset = max(0, r.ScriptPos.Line-1)
			opts.ColumnOffset = max(0, r.ScriptPos.Col-1)
		}
		return Compile(r.ScriptPos.File, r.Script, opts)
	})
	if err != nil {
		return nil, scriptErrors(r, err)
	}
	return prog.(*Program), nil
}

// scriptErrors returns the errors of a script that does not compile,
// each message prefixed with the rule it belongs to.
func scriptErrors(r *rules.Rule, err error) diag.ErrorList {
	list := r.Errors(err)
	for _, e := range list {
		e.Msg = diag.Sprintf("rule %s: script: %s", diag.Quote(r.Name), e.Msg)
	}
	return list
}
