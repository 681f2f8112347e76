package restmapper

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/editdistance"
)

// maxSuggestions is how many names a NotFoundError suggests at most.
const maxSuggestions = 3

// NotFoundError says that no resource matches Ref. Suggestions holds up to
// three close names that do resolve, best first; it is empty when nothing
// is close. UnknownGroup is set when Ref names an API group that the
// server does not serve at all.
type NotFoundError struct {
	Ref          string
	Suggestions  []string
	UnknownGroup bool
}

// Misspelt reports whether the reference is most likely a typo rather
// than a resource that may appear later: a close name resolves, and the
// reference names no group, or a group the server serves. A reference to
// a group nobody serves yet may be a CRD that is not installed.
func (e *NotFoundError) Misspelt() bool {
	return len(e.Suggestions) > 0 && !e.UnknownGroup
}

// Error returns a message such as
// `"deploymnets": no such resource; did you mean "deployments"?`.
func (e *NotFoundError) Error() string {
	msg := diag.Quote(e.Ref) + ": no such resource"
	if len(e.Suggestions) == 0 {
		return msg
	}
	quoted := make([]string, len(e.Suggestions))
	for i, s := range e.Suggestions {
		quoted[i] = fmt.Sprintf("%q", s)
	}
	alternatives := quoted[0]
	if n := len(quoted); n > 1 {
		alternatives = strings.Join(quoted[:n-1], ", ") + " or " + quoted[n-1]
	}
	return msg + "; did you mean " + alternatives + "?"
}

// candidate is one suggestion with its score; lower scores come first.
type candidate struct {
	text      string
	dist      int
	sameGroup bool
	rank      int
}

// suggest returns the names closest to a reference that did not resolve.
// Each resource contributes its closest name (plural, singular, short name
// or kind) by edit distance to the reference's name part, counted only up
// to maxDistance: a name whose length differs by more is passed over
// without aligning it, so a long reference costs no edit-distance work. When the
// reference named a group, suggestions are qualified with the resource's
// own group, so a wrong group ("deployments.extensions") is corrected too.
func (idx *index) suggest(ref string, gr schema.GroupResource) []string {
	word := gr.Resource
	kindStyle := startsUpper(ref)
	limit := maxDistance(word)
	var cands []candidate
	for i, r := range idx.resources {
		best, bestDist := "", limit+1
		names := slices.Concat([]string{r.GVR.Resource, r.Singular}, r.ShortNames, []string{r.Kind})
		for j, n := range names {
			d := editdistance.AtMost(word, strings.ToLower(n), limit)
			if d > limit {
				continue
			}
			isKind := j == len(names)-1
			// Among equally close names prefer the kind for a capitalized
			// reference and the resource names otherwise.
			if d < bestDist || (d == bestDist && isKind && kindStyle) {
				best, bestDist = n, d
				if !isKind || !kindStyle {
					best = strings.ToLower(n)
				}
			}
		}
		if best == "" {
			continue
		}
		text := best
		if gr.Group != "" && r.GVR.Group != "" {
			text += "." + r.GVR.Group
		}
		cands = append(cands, candidate{text: text, dist: bestDist, sameGroup: r.GVR.Group == gr.Group, rank: i})
	}
	return pick(cands)
}

// suggestKind returns the closest kinds to one that did not resolve in
// apiVersion, written as "apiVersion Kind", the requested group first.
func (idx *index) suggestKind(gv schema.GroupVersion, kind string) []string {
	word := strings.ToLower(kind)
	limit := maxDistance(word)
	var cands []candidate
	for i, r := range idx.resources {
		d := editdistance.AtMost(word, strings.ToLower(r.Kind), limit)
		if d > limit {
			continue
		}
		cands = append(cands, candidate{
			text:      r.GVR.GroupVersion().String() + " " + r.Kind,
			dist:      d,
			sameGroup: r.GVR.Group == gv.Group,
			rank:      i,
		})
	}
	return pick(cands)
}

// pick sorts candidates by distance, the requested group, then priority,
// and returns the first few distinct texts.
func pick(cands []candidate) []string {
	slices.SortStableFunc(cands, func(a, b candidate) int {
		if a.dist != b.dist {
			return a.dist - b.dist
		}
		if a.sameGroup != b.sameGroup {
			if a.sameGroup {
				return -1
			}
			return 1
		}
		return a.rank - b.rank
	})
	var out []string
	for _, c := range cands {
		if len(out) == maxSuggestions {
			break
		}
		if !slices.ContainsFunc(out, func(s string) bool { return strings.EqualFold(s, c.text) }) {
			out = append(out, c.text)
		}
	}
	return out
}

// maxDistance is how many edits a suggestion for word may be away: one for
// short words, up to three for long ones, so that "zz" suggests nothing.
func maxDistance(word string) int {
	switch n := len(word); {
	case n <= 3:
		return 1
	case n <= 6:
		return 2
	default:
		return 3
	}
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}
