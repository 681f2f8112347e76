package engine

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
)

// Combined loads the rules of several sources (kreact run's rule files,
// and the rule objects of its cluster) into one Loader (the engine, the
// admission server) as one set:
// each source loads its rules through its Part, and the loader is given
// the latest rules of every part together, so that a source's load never
// stops another's rules. Loads through the parts are serialised.
//
// Rule names are one namespace across the parts: a rule whose name an
// earlier part already has (a ClusterRule named as a rule file's rule) is
// not loaded, and the error of its part's load says where the other is.
type Combined struct {
	to    Loader
	mu    sync.Mutex
	parts []combinedPart
}

type combinedPart struct {
	rules []*rules.Rule
	keep  []string
}

// Combine returns the Combined of n parts that loads into to.
func Combine(to Loader, n int) *Combined {
	return &Combined{to: to, parts: make([]combinedPart, n)}
}

// Part returns the StatusLoader of part i: its Load replaces the part's
// rules (and the sources whose rules the part keeps as they run) and
// loads every part's; it returns the problems of the part's rules only,
// and those that name no rule. Its Status is the loader's (every part's
// rules) if the loader is a StatusLoader, and none otherwise.
func (c *Combined) Part(i int) StatusLoader { return part{c, i} }

type part struct {
	c *Combined
	i int
}

func (p part) Status() []Status {
	if s, ok := p.c.to.(StatusLoader); ok {
		return s.Status()
	}
	return nil
}

func (p part) Load(ctx context.Context, rs []*rules.Rule, keepSources ...string) error {
	c := p.c
	c.mu.Lock()
	defer c.mu.Unlock()
	c.parts[p.i] = combinedPart{rules: rs, keep: keepSources}
	var all []*rules.Rule
	var keep []string
	var dups diag.ErrorList
	first := map[string]*rules.Rule{}
	mine := map[string]bool{}
	for i, part := range c.parts {
		keep = append(keep, part.keep...)
		for _, r := range part.rules {
			if i == p.i {
				mine[r.Name] = true
			}
			if other, ok := first[r.Name]; ok {
				if i == p.i {
					dups.Add(r.Pos, diag.Sprintf("rule %q is also defined at %s, which runs; this one does not", r.Name, other.Pos))
				}
				continue
			}
			first[r.Name] = r
			all = append(all, r)
		}
	}
	err := c.to.Load(ctx, all, keep...)
	var problems []error
	for _, e := range diag.Problems(err) {
		var de *diag.Error
		if errors.As(e, &de) && de.Pos.Rule != "" && !mine[de.Pos.Rule] {
			continue // another part's
		}
		if errors.As(e, &de) && de.Pos.Rule == "" && de.Pos.File != "" && !p.hasSource(de.Pos.File) {
			continue
		}
		problems = append(problems, e)
	}
	if len(dups) > 0 {
		problems = append(problems, dups)
	}
	return errors.Join(problems...)
}

// hasSource reports whether file is the Source of one of the part's
// rules, or a source it keeps.
func (p part) hasSource(file string) bool {
	pt := p.c.parts[p.i]
	return slices.Contains(pt.keep, file) || slices.ContainsFunc(pt.rules, func(r *rules.Rule) bool { return r.Source == file })
}
