package diag

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestShorten(t *testing.T) {
	if got := Shorten("short"); got != "short" {
		t.Errorf("Shorten(short) = %q", got)
	}
	long := strings.Repeat("é", MaxQuoted) // 2 bytes each
	got := Shorten(long)
	if !strings.HasSuffix(got, "…") || len(got) > MaxQuoted+len("…") || !strings.HasPrefix(long, strings.TrimSuffix(got, "…")) {
		t.Errorf("Shorten cuts %d bytes of é to %q", len(long), got)
	}
	if got, want := Quote(strings.Repeat("a", 200)), `"`+strings.Repeat("a", MaxQuoted)+`…"`; got != want {
		t.Errorf("Quote = %s, want %s", got, want)
	}
}

func TestSprintfShortens(t *testing.T) {
	huge := strings.Repeat("x", 1<<16)
	tests := []struct {
		name string
		got  string
		max  int
	}{
		{"quoted", Sprintf("name %q", huge), MaxQuoted + 20},
		{"plain", Sprintf("name %s", huge), maxMessage},
		{"error", Sprintf("read: %v", errors.New(huge)), maxErrorArg + 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.got) > tt.max || !strings.Contains(tt.got, "x…") {
				t.Errorf("%d bytes, want at most %d, cut with …", len(tt.got), tt.max)
			}
		})
	}
	err := Errorf("open %q: %w", huge, fs.ErrNotExist)
	if !errors.Is(err, fs.ErrNotExist) || len(err.Error()) > 200 {
		t.Errorf("Errorf = %.200v, want a short error that wraps fs.ErrNotExist", err)
	}
	var l ErrorList
	l.Add(Position{}, huge)
	if len(l[0].Msg) > maxMessage+len("…") {
		t.Errorf("Add keeps a message of %d bytes", len(l[0].Msg))
	}
}
