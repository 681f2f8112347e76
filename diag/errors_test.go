package diag

import (
	"errors"
	"io/fs"
	"testing"
)

func TestPositionString(t *testing.T) {
	tests := []struct {
		pos  Position
		want string
	}{
		{Position{File: "a.yaml", Line: 3, Col: 7}, "a.yaml:3:7"},
		{Position{Rule: "r", File: "a.yaml", Line: 3, Col: 7}, "a.yaml:3:7"},
		{Position{File: "a.yaml", Line: 3}, "a.yaml:3"},
		{Position{File: "a.yaml"}, "a.yaml"},
		{Position{Line: 3, Col: 7}, "3:7"},
		{Position{}, "-"},
	}
	for _, tt := range tests {
		if got := tt.pos.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.pos, got, tt.want)
		}
	}
	if got := (Position{File: "a.yaml", Line: 3, Col: 7}).LineCol(); got != "3:7" {
		t.Errorf("LineCol = %q", got)
	}
}

func TestErrorList(t *testing.T) {
	var l ErrorList
	if l.Err() != nil {
		t.Error("empty list: Err() != nil")
	}
	if l.Error() != "no errors" {
		t.Errorf("empty list: Error() = %q", l.Error())
	}
	l.Add(Position{File: "b.yaml", Line: 1, Col: 1}, "third")
	l.Addf(Position{File: "a.yaml", Line: 2, Col: 5}, "%s", "second")
	l.Add(Position{File: "a.yaml", Line: 2, Col: 1}, "first")
	l.Add(Position{File: "a.yaml", Line: 10, Col: 1}, "after 2")
	l.Sort()
	want := "a.yaml:2:1: first\na.yaml:2:5: second\na.yaml:10:1: after 2\nb.yaml:1:1: third"
	if l.Error() != want {
		t.Errorf("Error() =\n%s\nwant\n%s", l.Error(), want)
	}
	err := l.Err()
	var list ErrorList
	if !errors.As(err, &list) || len(list) != 4 {
		t.Errorf("errors.As(ErrorList) failed on %T", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Msg != "first" {
		t.Errorf("errors.As(*Error) = %v, want the first error", e)
	}
	if len(l.Unwrap()) != 4 || !errors.Is(err, l[2]) {
		t.Error("Unwrap does not return every error")
	}
	if l[:1].Error() != "a.yaml:2:1: first" {
		t.Errorf("single error: %q", l[:1].Error())
	}
}

func TestWarningsAndDuplicates(t *testing.T) {
	var l ErrorList
	pos := Position{File: "a.yaml", Line: 1, Col: 1}
	l.Warnf(pos, "spelt %s", "onAd")
	l.Add(pos, "broken")
	l.Add(pos, "broken")
	l.RemoveMultiples()
	if got, want := l.Error(), "a.yaml:1:1: broken\na.yaml:1:1: warning: spelt onAd"; got != want {
		t.Errorf("Error() =\n%s\nwant\n%s", got, want)
	}
	if errs, warns := l.Count(); errs != 1 || warns != 1 {
		t.Errorf("Count = %d, %d; want 1, 1", errs, warns)
	}
	if got := l.Errors(); len(got) != 1 || got[0].Warning || len(l) != 2 {
		t.Errorf("Errors = %v, list now %v", got, l)
	}
}

func TestAddError(t *testing.T) {
	var inner ErrorList
	inner.Add(Position{File: "x.yaml", Line: 4, Col: 2}, "bad")
	var l ErrorList
	l.AddError(Position{File: "y.yaml"}, wrap{inner})
	l.AddError(Position{File: "y.yaml"}, &fs.PathError{Op: "open", Path: "y.yaml", Err: fs.ErrNotExist})
	var other ErrorList
	other.Add(Position{File: "z.yaml", Line: 1}, "worse")
	l.AddError(Position{}, errors.Join(inner, other))
	if len(l) != 4 || l[0].Pos.Line != 4 || l[1].Pos.File != "y.yaml" || l[3].Msg != "worse" {
		t.Fatalf("AddError = %v", l)
	}
	if !errors.Is(l.Err(), fs.ErrNotExist) {
		t.Error("the cause of an error added with AddError is lost")
	}
}

type wrap struct{ err error }

func (w wrap) Error() string { return w.err.Error() }
func (w wrap) Unwrap() error { return w.err }
