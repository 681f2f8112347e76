package rules

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
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

func TestLoadEachKeepsGoodFiles(t *testing.T) {
	dir := t.TempDir()
	good := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: %s}\nspec:\n  watch: [{resource: configmaps}]\n  script: \"function onAdd() {}\"\n"
	write := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	write("a.yaml", fmt.Sprintf(good, "a"))
	broken := write("b.yaml", fmt.Sprintf(good, "b")+"  bogus: 1\n")
	dup := write("c.yaml", fmt.Sprintf(good, "a"))
	rs, failed, err := LoadEach(dir)
	if len(rs) != 1 || rs[0].Name != "a" {
		t.Fatalf("LoadEach rules = %v, want only a", rs)
	}
	if !slices.Equal(failed, []string{broken, dup}) {
		t.Errorf("failed = %v, want [%s %s]", failed, broken, dup)
	}
	if err == nil || !strings.Contains(err.Error(), "b.yaml:7:3: unknown field") || !strings.Contains(err.Error(), `duplicate rule name "a"`) {
		t.Errorf("err = %v, want the unknown field and the duplicate", err)
	}
}

func TestTickScope(t *testing.T) {
	const rule = `apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: sweeper}
spec:
  watch: [{resource: configmaps}]
  %s
  script: "function onTick(ctx) {}"
`
	tests := []struct {
		name    string
		spec    string
		want    TickScope
		wantErr string
	}{
		{name: "default", spec: "every: 1m", want: ""},
		{name: "cluster", spec: "every: 1m\n  tickScope: cluster", want: TickCluster},
		{name: "replica", spec: "schedule: '@daily'\n  tickScope: replica", want: TickReplica},
		{name: "unknown", spec: "every: 1m\n  tickScope: node", wantErr: `r.yaml:7:14: spec.tickScope: unknown scope "node" (want cluster or replica)`},
		{name: "no ticks", spec: "tickScope: replica", wantErr: "r.yaml:6:14: spec.tickScope: applies to spec.every or spec.schedule, and neither is set"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, err := Parse("r.yaml", []byte(strings.Replace(rule, "%s", tt.spec, 1)))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse = %v, want error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if rs[0].TickScope != tt.want {
				t.Errorf("TickScope = %q, want %q", rs[0].TickScope, tt.want)
			}
		})
	}
}
