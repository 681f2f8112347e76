package rules

import "github.com/kreact/kreact/diag"

// compiledScript is what Rule.Compiled made of a rule's script, with the
// script it was made of.
type compiledScript struct {
	of  scriptSource
	val any
	err error
}

// scriptSource is what a rule's script is compiled from: every field of
// the rule that package scripting reads to compile it
// (scripting.CompileRule).
type scriptSource struct {
	script, file string
	lang         ScriptLang
	pos          diag.Position
}

// Compiled returns what compile made of r's script: package scripting's
// program and its compile error (this package runs no script, and does not
// know the program's type). The first call runs compile; later calls
// return what it made, until Script, ScriptFile, ScriptLang or ScriptPos
// change, when the next call runs compile again. It may be called from
// any goroutine; calls that find nothing made at the same time each run
// compile, and the last one's result is kept.
//
// It is why a rule is compiled once, not once per check: at start kreact
// run checks a rule (validate.Check), loads it into the engine, which
// checks it again, and into the admission server, and plans its
// informers, all with the same *Rule. The program lives as long as the
// Rule value, that version of the rule, does: a reload reads new Rules,
// whose programs are their own. Held by the rule rather than in a cache
// keyed by Fingerprint, it needs neither state outside the rule nor a
// policy to forget old versions, and no signature between the packages
// changes. It is an atomic.Value rather than a mutex so that a Rule is
// still copied as a value (c := *r), the copy keeping what was made
// (keyed by the script, it is right for the copy too). What compile
// returns is shared, and must not be changed.
func (r *Rule) Compiled(compile func() (any, error)) (any, error) {
	of := scriptSource{script: r.Script, file: r.ScriptFile, lang: r.ScriptLang, pos: r.ScriptPos}
	if c, _ := r.compiled.Load().(*compiledScript); c != nil && c.of == of {
		return c.val, c.err
	}
	val, err := compile()
	r.compiled.Store(&compiledScript{of: of, val: val, err: err})
	return val, err
}
