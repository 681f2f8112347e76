package editdistance

import "unicode/utf8"

// Distance is the optimal string alignment distance between a and b:
// insertions, deletions, substitutions and transpositions of adjacent
// letters each cost one ("deploymnets" is one edit from "deployments").
// It takes time proportional to the product of the lengths; for names a
// user wrote, which may be of any length, use AtMost.
func Distance(a, b string) int {
	return distance([]rune(a), []rune(b))
}

// AtMost is Distance(a, b) when that is at most limit, and limit+1
// otherwise, in time linear in the lengths of a and b (times limit).
// Strings whose lengths, in characters, differ by more than limit are
// told apart by counting alone; otherwise only alignments that stay within
// limit of the diagonal are computed, and the work stops as soon as every
// one of them costs more than limit. So comparing a megabyte a user wrote
// with a known name is cheap. A negative limit counts as zero.
func AtMost(a, b string, limit int) int {
	limit = max(limit, 0)
	na, nb := utf8.RuneCountInString(a), utf8.RuneCountInString(b)
	if na-nb > limit || nb-na > limit {
		return limit + 1
	}
	return banded([]rune(a), []rune(b), limit)
}

// banded is distance restricted to the cells within limit of the
// diagonal; every other cell is at least limit+1 (a path through it makes
// more than limit insertions or deletions), and counts as limit+1.
func banded(ra, rb []rune, limit int) int {
	big := limit + 1
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = min(j, big)
	}
	for i := 1; i <= len(ra); i++ {
		lo, hi := max(1, i-limit), min(len(rb), i+limit)
		cur[0] = min(i, big)
		if lo > 1 {
			cur[lo-1] = big
		}
		rowMin := cur[lo-1]
		for j := lo; j <= hi; j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			c := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				c = min(c, prev2[j-2]+1)
			}
			cur[j] = min(c, big)
			rowMin = min(rowMin, cur[j])
		}
		if hi < len(rb) {
			cur[hi+1] = big
		}
		if rowMin >= big {
			return big
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// distance is the whole computation, row by row.
func distance(ra, rb []rune) int {
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
