package actions_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/kreact/kreact/actions"
)

func TestConditionValidate(t *testing.T) {
	tests := []struct {
		name string
		c    actions.Condition
		want string
	}{
		{name: "valid", c: actions.Condition{Type: "Ready", Status: "True"}},
		{name: "unknown", c: actions.Condition{Type: "Ready", Status: "Unknown", Reason: "Probing"}},
		{name: "no type", c: actions.Condition{Status: "True"}, want: "type is required"},
		{name: "bad status", c: actions.Condition{Type: "Ready", Status: "true"}, want: `status must be "True", "False" or "Unknown", not "true"`},
		{name: "no status", c: actions.Condition{Type: "Ready"}, want: `status must be "True", "False" or "Unknown", not ""`},
		{name: "negative generation", c: actions.Condition{Type: "Ready", Status: "True", ObservedGeneration: -1}, want: "observedGeneration must not be negative, got -1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.c.Validate()
			got := ""
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("Validate() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestMergeCondition(t *testing.T) {
	then := "2026-01-01T00:00:00Z"
	now := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name        string
		conditions  string // JSON
		c           actions.Condition
		want        string // JSON
		wantChanged bool
		wantErr     string
	}{
		{
			name:       "first condition",
			conditions: `null`,
			c:          actions.Condition{Type: "Ready", Status: "True", Reason: "Up", ObservedGeneration: 3},
			want:       `[{"type":"Ready","status":"True","reason":"Up","observedGeneration":3,"lastTransitionTime":"2026-02-01T12:00:00Z"}]`, wantChanged: true,
		},
		{
			name:       "same status keeps the transition time, others kept in order",
			conditions: `[{"type":"Synced","status":"False","lastTransitionTime":"` + then + `"},{"type":"Ready","status":"True","reason":"Up","lastTransitionTime":"` + then + `"},{"type":"Other","status":"Unknown"}]`,
			c:          actions.Condition{Type: "Ready", Status: "True", Reason: "StillUp", Message: "fine"},
			want:       `[{"type":"Synced","status":"False","lastTransitionTime":"` + then + `"},{"type":"Ready","status":"True","reason":"StillUp","message":"fine","lastTransitionTime":"` + then + `"},{"type":"Other","status":"Unknown"}]`, wantChanged: true,
		},
		{
			name:       "nothing changed",
			conditions: `[{"type":"Ready","status":"True","reason":"Up","observedGeneration":3,"lastTransitionTime":"` + then + `"}]`,
			c:          actions.Condition{Type: "Ready", Status: "True", Reason: "Up", ObservedGeneration: 3},
			want:       `[{"type":"Ready","status":"True","reason":"Up","observedGeneration":3,"lastTransitionTime":"` + then + `"}]`,
		},
		{
			name:       "new status moves the transition time",
			conditions: `[{"type":"Ready","status":"True","reason":"Up","lastTransitionTime":"` + then + `"}]`,
			c:          actions.Condition{Type: "Ready", Status: "False", Reason: "Down"},
			want:       `[{"type":"Ready","status":"False","reason":"Down","lastTransitionTime":"2026-02-01T12:00:00Z"}]`, wantChanged: true,
		},
		{
			name:       "fields kreact does not set are kept, empty ones removed",
			conditions: `[{"type":"Ready","status":"True","reason":"Up","message":"old","lastProbeTime":null,"lastTransitionTime":"` + then + `"}]`,
			c:          actions.Condition{Type: "Ready", Status: "True"},
			want:       `[{"type":"Ready","status":"True","lastProbeTime":null,"lastTransitionTime":"` + then + `"}]`, wantChanged: true,
		},
		{
			name:       "a condition without a transition time gets one",
			conditions: `[{"type":"Ready","status":"True"}]`,
			c:          actions.Condition{Type: "Ready", Status: "True"},
			want:       `[{"type":"Ready","status":"True","lastTransitionTime":"2026-02-01T12:00:00Z"}]`, wantChanged: true,
		},
		{name: "not a list", conditions: `{"Ready":"True"}`, c: actions.Condition{Type: "Ready", Status: "True"}, wantErr: "status.conditions is a map[string]interface {}, not a list"},
		{name: "not objects", conditions: `["Ready"]`, c: actions.Condition{Type: "Ready", Status: "True"}, wantErr: "status.conditions[0] is a string, not an object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conditions any
			if err := json.Unmarshal([]byte(tt.conditions), &conditions); err != nil {
				t.Fatal(err)
			}
			before, _ := json.Marshal(conditions)
			got, changed, err := actions.MergeCondition(conditions, tt.c, now)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %t, want %t", changed, tt.wantChanged)
			}
			var want any
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("merged\n got %s\nwant %s", g, w)
			}
			if after, _ := json.Marshal(conditions); string(after) != string(before) {
				t.Errorf("the conditions given were modified: %s", after)
			}
		})
	}
}

// A condition written with the object itself records the generation its
// write produces, and the next call, which sees that generation, writes
// nothing: the loop of issue 37 ends after one write.
func TestMergeConditionInObject(t *testing.T) {
	then := "2026-01-01T00:00:00Z"
	now := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)
	stored := func(generation int) string {
		return fmt.Sprintf(`[{"type":"Ready","status":"True","observedGeneration":%d,"lastTransitionTime":"%s"}]`, generation, then)
	}
	tests := []struct {
		name        string
		conditions  string // JSON
		c           actions.Condition
		generation  int64
		want        string // JSON; the conditions given when unchanged
		wantChanged bool
	}{
		{
			name:       "first write records the generation it produces",
			conditions: `null`, generation: 1,
			c:    actions.Condition{Type: "Ready", Status: "True", ObservedGeneration: 1},
			want: `[{"type":"Ready","status":"True","observedGeneration":2,"lastTransitionTime":"2026-02-01T12:00:00Z"}]`, wantChanged: true,
		},
		{
			name:       "the next call, at that generation, writes nothing",
			conditions: stored(2), generation: 2,
			c:    actions.Condition{Type: "Ready", Status: "True", ObservedGeneration: 2},
			want: stored(2),
		},
		{
			name:       "a new generation (a spec change) is written once more",
			conditions: stored(2), generation: 3,
			c:    actions.Condition{Type: "Ready", Status: "True", ObservedGeneration: 3},
			want: stored(4), wantChanged: true,
		},
		{
			name:       "a server that did not move the generation is not written again",
			conditions: stored(4), generation: 3,
			c:    actions.Condition{Type: "Ready", Status: "True", ObservedGeneration: 3},
			want: stored(4),
		},
		{
			name:       "an older generation asked is written as asked",
			conditions: stored(4), generation: 4,
			c:    actions.Condition{Type: "Ready", Status: "True", ObservedGeneration: 3},
			want: stored(3), wantChanged: true,
		},
		{
			name:       "no observedGeneration asked: none written",
			conditions: stored(2), generation: 2,
			c:    actions.Condition{Type: "Ready", Status: "True"},
			want: `[{"type":"Ready","status":"True","lastTransitionTime":"` + then + `"}]`, wantChanged: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var conditions, want any
			if err := json.Unmarshal([]byte(tt.conditions), &conditions); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			got, changed, err := actions.MergeConditionInObject(conditions, tt.c, tt.generation, now)
			if err != nil {
				t.Fatal(err)
			}
			if changed != tt.wantChanged {
				t.Errorf("changed = %t, want %t", changed, tt.wantChanged)
			}
			g, _ := json.Marshal(got)
			w, _ := json.Marshal(want)
			if string(g) != string(w) {
				t.Errorf("merged\n got %s\nwant %s", g, w)
			}
		})
	}
}
