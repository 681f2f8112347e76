package rules

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
)

// Position is a place in a file that a user wrote. Line and Col are 1-based;
// 0 means unknown.
type Position struct {
	File string
	Line int
	Col  int
}

// IsValid reports whether the position has at least a line.
func (p Position) IsValid() bool { return p.Line > 0 }

// String returns "file:line:col", "file:line" when the column is unknown,
// or "file" when the line is unknown, the forms editors and go/scanner use.
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

// lineCol returns "line:col" for messages that point elsewhere in the same
// file.
func (p Position) lineCol() string {
	return Position{Line: p.Line, Col: p.Col}.String()
}

// Error is one problem in a rule file, at the position of the YAML node it
// is about.
type Error struct {
	Pos Position
	Msg string
}

// Error returns "file:line:col: message".
func (e *Error) Error() string {
	return e.Pos.String() + ": " + e.Msg
}

// ErrorList is every problem found in one or more rule files, in the style
// of go/scanner.ErrorList. The zero value is an empty list ready to use.
type ErrorList []*Error

// Add appends an error at pos.
// A message longer than a line should be (it quotes too much of what a
// user wrote) is cut.
func (l *ErrorList) Add(pos Position, msg string) {
	*l = append(*l, &Error{Pos: pos, Msg: shorten(msg, maxMessage)})
}

// Addf appends an error at pos with a formatted message.
func (l *ErrorList) Addf(pos Position, format string, args ...any) {
	l.Add(pos, shortf(format, args...))
}

// Len, Swap and Less implement sort.Interface.
func (l ErrorList) Len() int      { return len(l) }
func (l ErrorList) Swap(i, j int) { l[i], l[j] = l[j], l[i] }
func (l ErrorList) Less(i, j int) bool {
	return compareErrors(l[i], l[j]) < 0
}

func compareErrors(a, b *Error) int {
	return cmp.Or(
		cmp.Compare(a.Pos.File, b.Pos.File),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Col, b.Pos.Col),
		cmp.Compare(a.Msg, b.Msg),
	)
}

// Sort sorts the list by file, line, column and message. It is stable, so
// errors at the same position keep the order they were found in when their
// messages are equal.
func (l ErrorList) Sort() {
	slices.SortStableFunc(l, compareErrors)
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
