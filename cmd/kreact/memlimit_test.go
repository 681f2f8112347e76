package main

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"

	"github.com/kreact/kreact/scripting"
)

func TestContainerMemoryLimit(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  int64
		ok    bool
	}{
		{"cgroup v2", map[string]string{"/sys/fs/cgroup/memory.max": "536870912\n"}, 512 << 20, true},
		{"cgroup v2 without limit", map[string]string{"/sys/fs/cgroup/memory.max": "max\n"}, 0, false},
		{"cgroup v1", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "1073741824\n"}, 1 << 30, true},
		{"cgroup v1 without limit", map[string]string{"/sys/fs/cgroup/memory/memory.limit_in_bytes": "9223372036854771712\n"}, 0, false},
		{"no cgroup", nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			read := func(f string) ([]byte, error) {
				if s, ok := tt.files[f]; ok {
					return []byte(s), nil
				}
				return nil, errors.New("no such file")
			}
			got, ok := containerMemoryLimit(read)
			if got != tt.want || ok != tt.ok {
				t.Errorf("containerMemoryLimit = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	read := func(string) ([]byte, error) { return []byte("1000000000"), nil }
	setMemoryLimit(logger, func(string) string { return "500MiB" }, read)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit changed to %d", got)
	}
	setMemoryLimit(logger, func(string) string { return "" }, read)
	if got := debug.SetMemoryLimit(-1); got != 900000000 {
		t.Errorf("limit = %d, want 90%% of the container's", got)
	}
}

func TestScriptMemoryBudgetFlag(t *testing.T) {
	defer scripting.SetMemoryBudget(scripting.SetMemoryBudget(0))
	for _, tt := range []struct {
		args []string
		want int64
		ok   bool
	}{
		{nil, 128 << 20, true},
		{[]string{"--script-memory-budget", "1Gi"}, 1 << 30, true},
		{[]string{"--script-memory-budget=0"}, 0, true},
		{[]string{"--script-memory-budget", "-1Mi"}, 0, false},
		{[]string{"--script-memory-budget", "lots"}, 0, false},
	} {
		var b scriptBudgetFlag
		fs := newFlagSet("run", "", "")
		b.register(fs)
		if err := fs.parse(tt.args); err != nil {
			t.Fatal(err)
		}
		scripting.SetMemoryBudget(123)
		err := b.apply()
		var usage *usageError
		if tt.ok != (err == nil) || err != nil && !errors.As(err, &usage) {
			t.Errorf("%v: apply = %v", tt.args, err)
			continue
		}
		if got := scripting.SetMemoryBudget(123); tt.ok && got != tt.want {
			t.Errorf("%v: budget %d, want %d", tt.args, got, tt.want)
		}
	}
}
