package diag

import (
	"cmp"
	"errors"
	"slices"
	"strconv"
	"strings"
)

// Position is a place in a text that a user wrote. Line and Col are
// 1-based and Col counts bytes; 0 means unknown. Rule, when known, is the
// rule the place belongs to; it is not printed, it is for logs that name
// the rule as an attribute of its own.
type Position struct {
	Rule string
	File string
	Line int
	Col  int
}

// IsValid reports whether the position has at least a line.
func (p Position) IsValid() bool { return p.Line > 0 }

// String returns "file:line:col", "file:line" when the column is unknown,
// or "file" when the line is unknown, the forms editors and go/scanner use;
// "-" when nothing is known.
func (p Position) String() string {
	s := p.File
	if p.Line > 0 {
		if s != "" {
			s += ":"
		}
		s += strconv.Itoa(p.Line)
		if p.Col > 0 {
			s += ":" + strconv.Itoa(p.Col)
		}
	}
	if s == "" {
		s = "-"
	}
	return s
}

// LineCol returns "line:col", for messages that point elsewhere in the
// same file.
func (p Position) LineCol() string {
	return Position{Line: p.Line, Col: p.Col}.String()
}

// Compare orders positions by file, line and column.
func (p Position) Compare(q Position) int {
	return cmp.Or(cmp.Compare(p.File, q.File), cmp.Compare(p.Line, q.Line), cmp.Compare(p.Col, q.Col))
}

// Error is one problem at a position of what a user wrote.
type Error struct {
	Pos Position
	Msg string
	// Warning marks a problem that does not keep the text from being
	// used (`kreact validate` prints it and exits 0).
	Warning bool
	// Err, if not nil, is the error the problem comes from, for
	// errors.Is and errors.As; Msg already says what it says.
	Err error
}

// Error returns "file:line:col: message", or "file:line:col: warning:
// message" for a warning.
func (e *Error) Error() string {
	if e.Warning {
		return e.Pos.String() + ": warning: " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// ErrorList is every problem found in one or more texts, in the style of
// go/scanner.ErrorList. The zero value is an empty list ready to use.
type ErrorList []*Error

// Add appends an error at pos.
// A message longer than a line should be (it quotes too much of what a
// user wrote) is cut.
func (l *ErrorList) Add(pos Position, msg string) {
	*l = append(*l, &Error{Pos: pos, Msg: shorten(msg, maxMessage)})
}

// Addf appends an error at pos with a message formatted by Sprintf, which
// shortens what it quotes.
func (l *ErrorList) Addf(pos Position, format string, args ...any) {
	l.Add(pos, Sprintf(format, args...))
}

// Warnf appends a warning at pos, formatted as Addf formats.
func (l *ErrorList) Warnf(pos Position, format string, args ...any) {
	*l = append(*l, &Error{Pos: pos, Msg: shorten(Sprintf(format, args...), maxMessage), Warning: true})
}

// AddError appends err: the errors of an ErrorList or an *Error (err
// itself, what it wraps, or each of the errors it joins) with their own
// positions; any other error at pos, with its message as the message and
// itself as the cause.
func (l *ErrorList) AddError(pos Position, err error) {
	switch e := err.(type) {
	case ErrorList:
		*l = append(*l, e...)
		return
	case *Error:
		*l = append(*l, e)
		return
	case interface{ Unwrap() []error }:
		for _, x := range e.Unwrap() {
			l.AddError(pos, x)
		}
		return
	}
	var list ErrorList
	var one *Error
	switch {
	case errors.As(err, &list):
		*l = append(*l, list...)
	case errors.As(err, &one):
		*l = append(*l, one)
	default:
		*l = append(*l, &Error{Pos: pos, Msg: shorten(err.Error(), maxMessage), Err: err})
	}
}

// Len, Swap and Less implement sort.Interface.
func (l ErrorList) Len() int      { return len(l) }
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l ErrorList) Less(i, j int) bool {
	return compareErrors(l[i], l[j]) < 0
}

func compareErrors(a, b *Error) int {
	return cmp.Or(a.Pos.Compare(b.Pos), cmp.Compare(a.Msg, b.Msg))
}

// Sort sorts the list by file, line, column and message. It is stable, so
// errors at the same position keep the order they were found in when their
// messages are equal.
func (l ErrorList) Sort() {
	slices.SortStableFunc(l, compareErrors)
}

// RemoveMultiples sorts the list and keeps one of the errors that are the
// same problem (position, message and severity) reported more than once.
func (l *ErrorList) RemoveMultiples() {
	l.Sort()
	*l = slices.CompactFunc(*l, func(a, b *Error) bool {
		return a.Pos.Compare(b.Pos) == 0 && a.Msg == b.Msg && a.Warning == b.Warning
	})
}

// Count returns the number of errors and of warnings in the list.
func (l ErrorList) Count() (errs, warnings int) {
	for _, e := range l {
		if e.Warning {
			warnings++
		} else {
			errs++
		}
	}
	return errs, warnings
}

// Errors returns the errors of the list, without its warnings.
func (l ErrorList) Errors() ErrorList {
	return slices.DeleteFunc(slices.Clone(l), func(e *Error) bool { return e.Warning })
}

// Error returns every error, one per line. An empty list returns
// "no errors".
func (l ErrorList) Error() string {
	switch len(l) {
	case 0:
		return "no errors"
	case 1:
		return l[0].Error()
	}
	var b strings.Builder
	for i, e := range l {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(e.Error())
	}
	return b.String()
}

// Err returns nil for an empty list and the list itself otherwise, so that
// a function can end with "return l.Err()".
func (l ErrorList) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Unwrap returns the errors of the list, for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	errs := make([]error, len(l))
	for i, e := range l {
		errs[i] = e
	}
	return errs
}
