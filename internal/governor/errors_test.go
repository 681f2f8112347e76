package governor

import (
	"math"
	"testing"
)

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		n    int64
		want string
	}{
		{0, "0 bytes"},
		{1023, "1023 bytes"},
		{1024, "1 KiB"},
		{64 << 20, "64 MiB"},
		{70_100_000, "66.9 MiB"},
		{3 << 29, "1.5 GiB"},
		{math.MaxInt64, "8 EiB"},
	} {
		if got := FormatBytes(tt.n); got != tt.want {
			t.Errorf("FormatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}
