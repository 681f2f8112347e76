package scripting

import (
	"fmt"
	"math"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/dlclark/regexp2/v2"
)

// RegexpMatchTimeout bounds one match of a regular expression that goja runs
// with regexp2 (patterns with look-around or back-references; the others run
// on Go's linear-time regexp). A match that times out counts as no match.
//
// goja offers no per-runtime setting for this: it compiles regexp2 patterns
// with regexp2.DefaultMatchTimeout, a package variable. The first Compile or
// NewRuntime sets that variable to RegexpMatchTimeout, once, unless the
// program already changed it from regexp2's "forever" default. This is the
// package's only process-wide effect.
const RegexpMatchTimeout = 100 * time.Millisecond

var regexpOnce sync.Once

// configureRegexp must run before goja compiles any pattern: regex literals
// are compiled by Compile, the others when a script runs.
func configureRegexp() {
	regexpOnce.Do(func() {
		if regexp2.DefaultMatchTimeout == time.Duration(math.MaxInt64) {
			regexp2.DefaultMatchTimeout = RegexpMatchTimeout
		}
	})
}

// MaxRegexpNesting bounds how deep the groups of a regular expression may
// nest. Go's regexp refuses deeper ones itself, but goja hands patterns
// with look-around or back-references to regexp2, which compiles a
// pattern nested 100,000 deep in over a second and 60 MB. Real patterns
// nest a few levels.
const MaxRegexpNesting = 1000

// bytesPerRegexpUnit is what compiling one unit of a pattern (see
// regexpSize) takes: measured, goja's conversion, Go's regexp and regexp2
// together allocate 45–300 bytes per character of a pattern, and about
// 230 bytes per character that a counted repetition copies (Go's regexp
// compiles x{1000} into a thousand copies of x). An estimate, not a
// bound, as the other sizes of capAllocations.
const bytesPerRegexpUnit = 256

// regexpError is a pattern refused before it was compiled for how deep it
// nests.
type regexpError struct {
	// at is the character (from 1) where the pattern passes the limit.
	at int
}

func (e *regexpError) Error() string {
	return fmt.Sprintf("Invalid regular expression: groups nested deeper than %d levels, at character %d of the pattern", MaxRegexpNesting, e.at)
}

// regexpSize estimates, in bytes, what compiling pattern (a JavaScript
// regular expression's source) allocates, before any compiler sees it,
// and refuses a pattern nested deeper than MaxRegexpNesting. The scan is
// linear and never under-counts by much: each character is a unit, a
// counted repetition {n}, {n,} or {n,m} multiplies the units of what it
// repeats, nested ones multiply together, and escapes and character
// classes count as characters. Compiling a huge or deeply nested pattern
// cannot be interrupted, so a pattern can only be refused before.
func regexpSize(pattern string) (int64, error) {
	type group struct {
		// units of the group so far; last: the units of its last
		// atom, which a repetition multiplies.
		units, last int64
	}
	groups := []group{{}}
	for i := 0; i < len(pattern); {
		g := &groups[len(groups)-1]
		atom := int64(1)
		switch c := pattern[i]; c {
		case '\\':
			i += 2
			// \u{…}, \p{…} and \P{…} name one character or class.
			if i < len(pattern) && pattern[i] == '{' && strings.ContainsRune("upP", rune(pattern[i-1])) {
				if j := strings.IndexByte(pattern[i:], '}'); j >= 0 {
					i += j + 1
				}
			}
		case '[':
			i++
			for i < len(pattern) && pattern[i] != ']' {
				if pattern[i] == '\\' {
					i++
				}
				i++
			}
			i++
		case '(':
			if len(groups) > MaxRegexpNesting {
				return 0, &regexpError{at: utf8.RuneCountInString(pattern[:i]) + 1}
			}
			groups = append(groups, group{})
			i++
			continue
		case ')':
			i++
			if len(groups) == 1 {
				break // unbalanced: goja reports it
			}
			inner := g.units
			groups = groups[:len(groups)-1]
			g = &groups[len(groups)-1]
			atom = add(inner, 1)
		case '{':
			n, j, ok := repetition(pattern[i:])
			if !ok {
				i++
				break
			}
			i += j
			g.units = add(g.units, mul(g.last, max(n-1, 0), 1))
			g.last = 0
			continue
		case '*', '+', '?', '|':
			i++
			g.units = add(g.units, 1)
			g.last = 0
			continue
		default:
			i++
		}
		g.units = add(g.units, atom)
		g.last = atom
	}
	var units int64
	for _, g := range groups {
		units = add(units, g.units)
	}
	return mul(units, bytesPerRegexpUnit, 1), nil
}

// repetition parses a counted repetition at the start of s ({n}, {n,} or
// {n,m}) and returns how many copies of its atom a compiler may make (n,
// n+1 or m, at most 2⁵³), and its length; ok is false for anything else,
// which JavaScript reads as plain characters.
func repetition(s string) (copies int64, length int, ok bool) {
	end := strings.IndexByte(s, '}')
	if end < 2 {
		return 0, 0, false
	}
	lo, hi, comma := strings.Cut(s[1:end], ",")
	num := func(d string) (int64, bool) {
		if d == "" {
			return 0, false
		}
		var n int64
		for _, c := range []byte(d) {
			if c < '0' || c > '9' {
				return 0, false
			}
			n = min(n*10+int64(c-'0'), 1<<53)
		}
		return n, true
	}
	n, ok := num(lo)
	if !ok {
		return 0, 0, false
	}
	switch {
	case !comma:
		return n, end + 1, true
	case hi == "":
		return add(n, 1), end + 1, true
	}
	m, ok := num(hi)
	if !ok {
		return 0, 0, false
	}
	return max(n, m), end + 1, true
}
