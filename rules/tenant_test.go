package rules

import (
	"strings"
	"testing"
	"time"
)

func TestTenantLimitsBindTeamsRulesOnly(t *testing.T) {
	src := strings.Replace(teamRule, "  script: |", "  workers: 8\n  timeout: 10s\n  memoryLimit: 256Mi\n  http: [\"https://hooks.example/\"]\n  script: |", 1)
	r, err := ParseObject(object(t, src))
	if err != nil {
		t.Fatal(err)
	}
	l := TenantLimits{MaxWorkers: 4, MaxTimeout: 5 * time.Second, MaxMemoryLimit: 64 << 20, MaxRateLimit: 100}
	got := l.Check(r).Error()
	for _, want := range []string{
		"rule/team-a/restart: spec.http: a Rule in a namespace may not call URLs unless kreact runs with --tenant-http",
		"spec.workers: 8 is over the limit for a Rule in a namespace, 4 (kreact run --tenant-max-workers)",
		"spec.timeout: 10s is over the limit for a Rule in a namespace, 5s (kreact run --tenant-max-timeout)",
		"spec.memoryLimit: 256Mi is over the limit for a Rule in a namespace, 64Mi",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("problems\n%s\nwant %q", got, want)
		}
	}
	if strings.Contains(got, "rateLimit") {
		t.Errorf("the default rate limit (%v) is under the ceiling, but: %s", r.RateLimit, got)
	}
	l.HTTP, l.MaxWorkers, l.MaxTimeout, l.MaxMemoryLimit = true, 0, 0, 0
	if errs := l.Check(r); len(errs) > 0 {
		t.Errorf("with HTTP allowed and no ceilings: %v", errs)
	}
	cluster := strings.NewReplacer("kind: Rule", "kind: ClusterRule", "  namespace: team-a\n", "").Replace(src)
	r, err = ParseObject(object(t, cluster))
	if err != nil {
		t.Fatal(err)
	}
	if errs := (TenantLimits{MaxWorkers: 1}).Check(r); len(errs) > 0 {
		t.Errorf("a ClusterRule was held to the tenants' limits: %v", errs)
	}
}
