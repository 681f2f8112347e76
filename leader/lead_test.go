package leader

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/kreact/kreact/lifecycle"
)

func TestLeaderElectionOffJustLeads(t *testing.T) {
	var notified []bool
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	sentinel := errors.New("lead's own error")
	r, err := Lead(nil, nil, func(leading bool) { notified = append(notified, leading) },
		lifecycle.Func(func(got context.Context) error {
			if got != ctx {
				t.Error("lead did not get run's context")
			}
			return sentinel
		}))
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Start(ctx); !errors.Is(err, sentinel) {
		t.Errorf("Start = %v, want lead's error", err)
	}
	if !slices.Equal(notified, []bool{true}) {
		t.Errorf("notified %v, want [true]", notified)
	}
}
