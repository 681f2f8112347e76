package cmdline

import (
	"errors"
	"log/slog"
	"testing"

	"github.com/kreact/kreact/metrics"
)

func TestServeFlagErrors(t *testing.T) {
	s := ServeFlags{Pprof: true}
	var ue *UsageError
	_, err := metrics.Listen(t.Context(), nil, s.Options(nil, nil, slog.New(slog.DiscardHandler)))
	if err := ListenError(err); !errors.As(err, &ue) {
		t.Errorf("--pprof without an address = %v, want a usage error", err)
	}
}
