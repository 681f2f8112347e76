package linediff

import (
	"fmt"
	"strings"
	"testing"
)

func TestUnified(t *testing.T) {
	lines := func(ls ...string) string { return strings.Join(ls, "\n") + "\n" }
	long := lines("a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l")
	for _, c := range []struct {
		name, before, after, want string
	}{
		{"same", long, long, ""},
		{"both empty", "", "", ""},
		{"created", "", lines("a", "b"), lines("@@ -0,0 +1,2 @@", "+a", "+b")},
		{"deleted", lines("a", "b"), "", lines("@@ -1,2 +0,0 @@", "-a", "-b")},
		{"a line added, with three lines of context",
			long, lines("a", "b", "c", "d", "e", "f", "new", "g", "h", "i", "j", "k", "l"),
			lines("@@ -4,6 +4,7 @@", " d", " e", " f", "+new", " g", " h", " i")},
		{"a line changed at the start",
			long, lines("A", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l"),
			lines("@@ -1,4 +1,4 @@", "-a", "+A", " b", " c", " d")},
		{"changes far apart are two hunks",
			long, lines("A", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "L"),
			lines("@@ -1,4 +1,4 @@", "-a", "+A", " b", " c", " d", "@@ -9,4 +9,4 @@", " i", " j", " k", "-l", "+L")},
		{"changes within six lines are one hunk",
			long, lines("a", "B", "c", "d", "e", "f", "g", "H", "i", "j", "k", "l"),
			lines("@@ -1,11 +1,11 @@", " a", "-b", "+B", " c", " d", " e", " f", " g", "-h", "+H", " i", " j", " k")},
		{"a line removed at the end", lines("a", "b"), lines("a"), lines("@@ -1,2 +1,1 @@", " a", "-b")},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Unified(c.before, c.after, 3); got != c.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, c.want)
			}
		})
	}
}

func TestMarked(t *testing.T) {
	tests := []struct {
		name, want, got, diff string
	}{
		{"equal", "a\nb\n", "a\nb\n", "  a\n  b\n"},
		{"changed line", "a\nb\nc\n", "a\nx\nc\n", "  a\n- b\n+ x\n  c\n"},
		{"added", "a\n", "a\nb\n", "  a\n+ b\n"},
		{"removed", "a\nb\n", "b\n", "- a\n  b\n"},
		{"nothing wanted", "", "a\n", "- \n+ a\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Marked(tt.want, tt.got); got != tt.diff {
				t.Errorf("Marked =\n%s\nwant\n%s", got, tt.diff)
			}
		})
	}
}

// TestUnifiedOfAHugeChange: a change too big to align line by line
// (a rewrite of a large object) is still a diff, all of it removed then
// all of it added, in bounded memory.
func TestUnifiedOfAHugeChange(t *testing.T) {
	var a, b []string
	for i := range 2100 {
		x, y := fmt.Sprintf("a%d", i), fmt.Sprintf("b%d", i)
		if i == 1050 {
			x, y = "common", "common"
		}
		a, b = append(a, x), append(b, y)
	}
	got := Unified(strings.Join(a, "\n")+"\n", strings.Join(b, "\n")+"\n", 3)
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if lines[0] != "@@ -1,2100 +1,2100 @@" || len(lines) != 1+4200 || lines[1051] != "-common" || lines[2100+1051] != "+common" {
		t.Errorf("the diff has %d lines, starting %q, line 1051 %q", len(lines), lines[0], lines[1051])
	}
}
