package rules

import (
	"strings"
	"testing"
	"time"
)

func TestEvery(t *testing.T) {
	const rule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: sweeper}
spec:
  watch: [{resource: configmaps}]
  every: %s
  script: "function onTick(ctx) {}"
`
	tests := []struct {
		every   string
		want    time.Duration
		wantErr string
	}{
		{every: "30s", want: 30 * time.Second},
		{every: "null", want: 0},
		{every: "10ms", wantErr: "r.yaml:6:10: spec.every: must be between 1s and 24h0m0s"},
		{every: "10", wantErr: "spec.every: 10 has no unit"},
	}
	for _, tt := range tests {
		t.Run(tt.every, func(t *testing.T) {
			rs, err := Parse("r.yaml", []byte(strings.Replace(rule, "%s", tt.every, 1)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rs[0].Every != tt.want {
				t.Errorf("Every = %v, want %v", rs[0].Every, tt.want)
			}
		})
	}
}
