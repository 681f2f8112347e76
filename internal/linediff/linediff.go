package linediff

import (
	"fmt"
	"strings"
)

// Op is what an Edit does to a line.
type Op byte

const (
	Keep   Op = ' ' // in both
	Remove Op = '-' // only in the first list
	Add    Op = '+' // only in the second list
)

// Edit is one line of a diff: Keep (A and B are its indexes in both
// lists), Remove (A; B is -1) or Add (B; A is -1).
type Edit struct {
	Op   Op
	A, B int
}

// maxCells bounds the table of Edits (8 bytes a cell): beyond it, the
// lines that differ are not aligned.
const maxCells = 1 << 22

// Edits returns the edits from a to b along their longest common
// subsequence. The common prefix and suffix, most of an object that an
// action changes, are taken off first, so that the quadratic part covers
// only what changed.
func Edits(a, b []string) []Edit {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	x, y := a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(x)*len(y) > maxCells {
		// Too big a change to align line by line: all of it goes, all
		// of it comes, a diff still, if not the shortest.
		x, y = nil, nil
	}
	// lcs[i][j] is the length of the longest common subsequence of x[i:]
	// and y[j:].
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []Edit
	for i := range pre {
		out = append(out, Edit{Keep, i, i})
	}
	if x == nil && y == nil {
		for i := pre; i < len(a)-suf; i++ {
			out = append(out, Edit{Remove, i, -1})
		}
		for j := pre; j < len(b)-suf; j++ {
			out = append(out, Edit{Add, -1, j})
		}
	}
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			out = append(out, Edit{Keep, pre + i, pre + j})
			i++
			j++
		case j < len(y) && (i == len(x) || lcs[i][j+1] > lcs[i+1][j]):
			out = append(out, Edit{Add, -1, pre + j})
			j++
		default:
			out = append(out, Edit{Remove, pre + i, -1})
			i++
		}
	}
	for k := range suf {
		out = append(out, Edit{Keep, len(a) - suf + k, len(b) - suf + k})
	}
	return out
}

// lines splits a text into its lines, without the last newline; an empty
// text has none.
func lines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

// Marked returns every line of both texts, each prefixed with "- " (only
// in want), "+ " (only in got) or "  " (in both): for short texts, such
// as a test's expected and actual actions, where all of both matters.
func Marked(want, got string) string {
	a, b := lines(want), lines(got)
	if len(a) == 0 {
		a = []string{""}
	}
	if len(b) == 0 {
		b = []string{""}
	}
	var out strings.Builder
	for _, e := range Edits(a, b) {
		switch e.Op {
		case Keep:
			out.WriteString("  " + a[e.A] + "\n")
		case Remove:
			out.WriteString("- " + a[e.A] + "\n")
		case Add:
			out.WriteString("+ " + b[e.B] + "\n")
		}
	}
	return out.String()
}

// Unified returns the lines that differ between before and after as a
// unified diff (diff -u, without the file header) with context lines of
// context around each change; "" when they are the same.
func Unified(before, after string, context int) string {
	a, b := lines(before), lines(after)
	edits := Edits(a, b)
	// aBefore[k] and bBefore[k] count the lines of a and b before edits[k].
	aBefore, bBefore := make([]int, len(edits)+1), make([]int, len(edits)+1)
	for k, e := range edits {
		aBefore[k+1], bBefore[k+1] = aBefore[k], bBefore[k]
		if e.Op != Add {
			aBefore[k+1]++
		}
		if e.Op != Remove {
			bBefore[k+1]++
		}
	}
	var out strings.Builder
	for start := 0; start < len(edits); {
		// The next hunk: from context lines before a change to context
		// lines after the last change that is at most 2*context lines
		// from the one before it.
		first := start
		for first < len(edits) && edits[first].Op == Keep {
			first++
		}
		if first == len(edits) {
			break
		}
		last := first
		for k := first + 1; k < len(edits); k++ {
			if edits[k].Op != Keep {
				if k-last > 2*context {
					break
				}
				last = k
			}
		}
		from, to := max(first-context, start), min(last+context+1, len(edits))
		var hunk strings.Builder
		aLen, bLen := 0, 0
		for _, e := range edits[from:to] {
			switch e.Op {
			case Keep:
				hunk.WriteString(" " + a[e.A] + "\n")
				aLen++
				bLen++
			case Remove:
				hunk.WriteString("-" + a[e.A] + "\n")
				aLen++
			case Add:
				hunk.WriteString("+" + b[e.B] + "\n")
				bLen++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n%s", hunkRange(aBefore[from], aLen), hunkRange(bBefore[from], bLen), hunk.String())
		start = to
	}
	return out.String()
}

// hunkRange is a hunk's range of lines in one file as diff -u writes it:
// "start,length", 1-based, where before lines of the file come before
// the hunk; an empty range names the line it follows ("0,0" at the
// start of the file).
func hunkRange(before, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", before)
	}
	return fmt.Sprintf("%d,%d", before+1, n)
}
