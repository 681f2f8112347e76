package memlimit

import (
	"errors"
	"io"
	"log/slog"
	"math"
	"runtime/debug"
	"testing"
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
			got, ok := containerLimit(read)
			if got != tt.want || ok != tt.ok {
				t.Errorf("containerLimit = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSetMemoryLimit(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	debug.SetMemoryLimit(math.MaxInt64)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	read := func(string) ([]byte, error) { return []byte("1000000000"), nil }
	Set(logger, func(string) string { return "500MiB" }, read)
	if got := debug.SetMemoryLimit(-1); got != math.MaxInt64 {
		t.Errorf("with GOMEMLIMIT set, the limit changed to %d", got)
	}
	Set(logger, func(string) string { return "" }, read)
	if got := debug.SetMemoryLimit(-1); got != 900000000 {
		t.Errorf("limit = %d, want 90%% of the container's", got)
	}
}
