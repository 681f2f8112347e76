package metrics_test

import (
	"testing"

	"github.com/kreact/kreact/metrics"
)

// synced is the engine's answer when every rule has caught up.
func synced() []string { return nil }

func TestReadiness(t *testing.T) {
	obs := metrics.NewReadiness(metrics.New())
	behind := []string{"b", "a"}
	eng := func() []string { return behind }
	if err := obs.Check(eng); err == nil || err.Error() != "no rules loaded" {
		t.Errorf("ready with no rules = %v", err)
	}
	if err := obs.Check(nil); err == nil {
		t.Error("ready without an engine = nil, want an error")
	}
	obs.SetLeading(false)
	if err := obs.Check(nil); err != nil {
		t.Errorf("a standby is ready; got %v", err)
	}
	obs.SetLeading(true)
	if err := obs.Check(eng); err == nil {
		t.Error("a new leader with no rules loaded is ready")
	}
	obs.RulesLoaded(1)
	if err := obs.Check(eng); err == nil || err.Error() != "waiting for caches to sync: rules b, a" {
		t.Errorf("leader with rules behind: %v", err)
	}
	if err := obs.Check(synced); err != nil {
		t.Errorf("leader with rules loaded and synced: %v", err)
	}
}
