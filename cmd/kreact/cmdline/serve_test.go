package cmdline

import (
	"errors"
	"log/slog"
	"testing"
)

func TestServeFlagErrors(t *testing.T) {
	s := ServeFlags{Pprof: true}
	var ue *UsageError
	if _, err := s.Listen(t.Context(), slog.New(slog.DiscardHandler), nil, nil); !errors.As(err, &ue) {
		t.Errorf("--pprof without an address = %v, want a usage error", err)
	}
}
