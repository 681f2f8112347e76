package main

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/kreact/kreact/scripting"
)

// containerMemoryLimit reads the container's memory limit with read, from
// cgroup v2's file, then v1's; false when there is none ("max", or v1's
// huge "no limit" value).
func containerMemoryLimit(read func(string) ([]byte, error)) (int64, bool) {
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

// setMemoryLimit gives Go's collector a soft limit of 90% of the
// container's memory limit, unless GOMEMLIMIT is set, so that it returns
// memory (a script's garbage after its call was stopped) before the kernel
// kills the process.
func setMemoryLimit(logger *slog.Logger, getenv func(string) string, read func(string) ([]byte, error)) {
	if getenv("GOMEMLIMIT") != "" {
		return
	}
	limit, ok := containerMemoryLimit(read)
	if !ok {
		return
	}
	soft := limit / 10 * 9
	debug.SetMemoryLimit(soft)
	logger.Info("Go memory soft limit set from the container's memory limit", "containerLimit", limit, "goMemLimit", soft)
}

// scriptBudgetFlag is run's --script-memory-budget: what all running
// handler calls together may be charged (scripting.SetMemoryBudget).
type scriptBudgetFlag struct{ value string }

func (b *scriptBudgetFlag) register(fs *flagSet) {
	fs.StringVar(&b.value, "script-memory-budget", "128Mi",
		"what all handler calls running at once may allocate together, as a quantity (0: no budget); past it, the calls that allocated most are stopped")
}

// apply sets the budget.
func (b *scriptBudgetFlag) apply() error {
	q, err := resource.ParseQuantity(b.value)
	if err != nil || q.Sign() < 0 {
		return &usageError{fmt.Sprintf("run: --script-memory-budget %q: want a quantity such as 256Mi or 1Gi", b.value)}
	}
	scripting.SetMemoryBudget(q.Value())
	return nil
}
