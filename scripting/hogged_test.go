package scripting

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/governor"
)

// A call stopped at its timeout or memory limit while computing hogged the
// process; one that threw, even after long work, or timed out while it
// waited, did not.
func TestHogged(t *testing.T) {
	tests := []struct {
		name, body string
		opts       RuntimeOptions
		want       bool
	}{
		{"endless loop", `for (;;) {}`, RuntimeOptions{Timeout: 100 * time.Millisecond}, true},
		{"memory", `const a = []; for (;;) a.push({i: a.length});`, RuntimeOptions{MemoryLimit: 16 << 20, Timeout: 30 * time.Second}, true},
		{"throw", `throw new Error("boom");`, RuntimeOptions{}, false},
		{"CPU limit", `for (;;) {}`, RuntimeOptions{Timeout: 10 * time.Second, CPULimit: func() time.Duration { return 30 * time.Millisecond }}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := mustRuntime(t, "rule.js", "function onAdd(obj) {\n  "+tt.body+"\n}\n", newFakeHost(), tt.opts)
			_, err := r.Call(addEvent)
			if err == nil {
				t.Fatal("the call succeeded")
			}
			if got := event.Hogged(fmt.Errorf("wrapped: %w", err)); got != tt.want {
				t.Errorf("Hogged(%v) = %v, want %v", err, got, tt.want)
			}
		})
	}
	waited := &event.ScriptError{Message: "timed out", Timeout: true, CPU: governor.DemoteAfter / 2}
	thrown := &event.ScriptError{Message: "Error: boom", CPU: time.Second}
	if event.Hogged(waited) || event.Hogged(thrown) || event.Hogged(errors.New("timed out")) {
		t.Error("a call that timed out while it waited, or threw, counts as hogging")
	}
}
