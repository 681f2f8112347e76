package rules

import (
	"errors"
	"testing"
)

func TestPositionString(t *testing.T) {
	tests := []struct {
		pos  Position
		want string
	}{
		{Position{"a.yaml", 3, 7}, "a.yaml:3:7"},
		{Position{"a.yaml", 3, 0}, "a.yaml:3"},
		{Position{"a.yaml", 0, 0}, "a.yaml"},
		{Position{"", 3, 7}, "3:7"},
		{Position{}, "-"},
	}
	for _, tt := range tests {
		if got := tt.pos.String(); got != tt.want {
			t.Errorf("%#v.String() = %q, want %q", tt.pos, got, tt.want)
		}
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
	l.Add(Position{"b.yaml", 1, 1}, "third")
	l.Addf(Position{"a.yaml", 2, 5}, "%s", "second")
	l.Add(Position{"a.yaml", 2, 1}, "first")
	l.Add(Position{"a.yaml", 10, 1}, "after 2")
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
