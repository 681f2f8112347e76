package dynamicinformer

import (
	"fmt"
	"strings"
)

// Describe summarises informers for a log line, e.g.
// `configmaps.v1: synced, 1200 objects; pods.v1: starting, 0 objects`,
// and returns how many objects they hold together. The count is what each
// informer has delivered so far: it grows while an initial list is being
// handed out and stays at 0 while the list is still being fetched.
func Describe(infs []WatchStatus) (string, int) {
	parts := make([]string, 0, len(infs))
	total := 0
	for _, s := range infs {
		state := s.Phase.String()
		if s.Synced {
			// The informer's own answer, not its loop's phase, which
			// catches up a moment later.
			state = "synced"
		}
		parts = append(parts, fmt.Sprintf("%s: %s, %d objects", s.Key, state, s.Objects))
		total += s.Objects
	}
	return strings.Join(parts, "; "), total
}
