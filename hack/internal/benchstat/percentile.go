package benchstat

import (
	"slices"
	"time"
)

// Percentile returns the p-th percentile (0–100) of ds by the nearest-rank
// method, or 0 for none.
func Percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(p/100*float64(len(s))+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}
