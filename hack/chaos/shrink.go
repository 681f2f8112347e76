package main

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// Shrink looks for a shorter sequence of operations that still breaks a
// guarantee that ops broke (delta debugging: drop one of n chunks, keep
// the rest if a run of it still fails, and cut finer when none can go),
// for at most budget. Each try is a whole run on fresh namespaces.
func (c *Checker) Shrink(ctx context.Context, seed uint64, ops []Op, found []Violation, budget time.Duration) []Op {
	end := time.Now().Add(budget)
	broken := map[string]bool{}
	for _, v := range found {
		broken[v.Guarantee] = true
	}
	still := func(try []Op) bool {
		_, vs, err := c.Run(ctx, seed, 0, try)
		if err != nil {
			fmt.Fprintf(c.Out, "  shrinking: %v\n", err)
			return false
		}
		ok := slices.ContainsFunc(vs, func(v Violation) bool { return broken[v.Guarantee] })
		fmt.Fprintf(c.Out, "  shrinking: %d operations: %v\n", len(try), map[bool]string{true: "still fails", false: "passes"}[ok])
		return ok
	}
	n := 2
	for len(ops) >= 2 && time.Now().Before(end) && ctx.Err() == nil {
		size := (len(ops) + n - 1) / n
		reduced := false
		for i := 0; i < len(ops) && time.Now().Before(end); i += size {
			try := slices.Concat(ops[:i], ops[min(i+size, len(ops)):])
			if still(try) {
				ops, n, reduced = try, max(n-1, 2), true
				break
			}
		}
		if !reduced {
			if n >= len(ops) {
				break
			}
			n = min(2*n, len(ops))
		}
	}
	return ops
}
