// Package diag (diagnostics) holds what kreact says about text a user wrote: a rule
// file, a script, a test file. A Position names a place in such a text
// (and the rule it belongs to); an Error is one problem at a Position; an
// ErrorList is every problem found, in the style of go/scanner, so that a
// user fixes a file in one round trip rather than one per mistake.
//
// Every package that reports on what a user wrote uses these types:
// rules (YAML), scripting (scripts, and where a script asked for an
// action), ruletest (test files), actions (an action's origin), the engine
// (a rule that cannot run) and the commands that print them. They are
// values; nothing is parsed back out of a message.
//
// Errors print as "file:line:col: message", one per line for a list, the
// form editors and go/scanner use. A message never quotes more than a few
// hundred bytes of what a user wrote (Quote, Shorten, ErrorList.Addf), so a
// 10 MB name does not make a 10 MB log line. Log writes each problem of
// an error as a log record of its own, with the rule as an attribute.
//
// The package imports no other kreact package, so that every other
// package may use it.
package diag
