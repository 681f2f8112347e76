//go:build !linux

package scripting

import "time"

// Without per-thread CPU clocks and priorities, calls are never demoted.

func currentThreadID() int                    { return 0 }
func threadCPUTime(int) (time.Duration, bool) { return 0, false }
func demoteThread(int)                        {}
