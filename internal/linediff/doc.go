// Package linediff compares two lists of lines along their longest
// common subsequence: the edits (Edits), a unified diff as diff -u writes
// its hunks (Unified), and a whole-text diff with every line marked
// (Marked).
//
// Guarantees: applying the edits to the first list gives the second; a
// change too large to align line by line (more than 4 Mi cells of the
// table once the common prefix and suffix are taken off) is still a
// correct diff, all of the changed part removed then added, in bounded
// memory.
package linediff
