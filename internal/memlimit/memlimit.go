package memlimit

import (
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"
)

// containerLimit reads the container's memory limit with read, from
// cgroup v2's file, then v1's; false when there is none ("max", or v1's
// huge "no limit" value).
func containerLimit(read func(string) ([]byte, error)) (int64, bool) {
	for _, f := range []string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		data, err := read(f)
		if err != nil {
			continue
		}
		s := strings.TrimSpace(string(data))
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 || n >= 1<<60 {
			return 0, false
		}
		return n, true
	}
	return 0, false
}

// Set gives Go's collector a soft limit of 90% of the
// container's memory limit, unless GOMEMLIMIT is set, so that it returns
// memory (a script's garbage after its call was stopped) before the kernel
// kills the process.
func Set(logger *slog.Logger, getenv func(string) string, read func(string) ([]byte, error)) {
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	limit, ok := containerLimit(read)
	if !ok {
		return
	}
	soft := limit / 10 * 9
	debug.SetMemoryLimit(soft)
	logger.Info("Go memory soft limit set from the container's memory limit", "containerLimit", limit, "goMemLimit", soft)
}
