//go:build !linux

package governor

import "time"

// Without per-thread CPU clocks, calls are never demoted.

func threadCPUTime(int) (time.Duration, bool) { return 0, false }
