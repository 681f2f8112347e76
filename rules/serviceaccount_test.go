package rules

import (
	"strings"
	"testing"
)

func TestServiceAccountNameIsATeamsRulesOnly(t *testing.T) {
	withSA := strings.Replace(teamRule, "  script: |", "  serviceAccountName: restarter\n  script: |", 1)
	r, err := ParseObject(object(t, withSA))
	if err != nil {
		t.Fatal(err)
	}
	if r.ServiceAccountName != "restarter" {
		t.Errorf("ServiceAccountName %q, want restarter", r.ServiceAccountName)
	}
	r, err = ParseObject(object(t, teamRule))
	if err != nil {
		t.Fatal(err)
	}
	if r.ServiceAccountName != "" {
		t.Errorf("a Rule that names no ServiceAccount got %q, want none (kreact run's default applies)", r.ServiceAccountName)
	}

	for _, tc := range []struct {
		name string
		rule func() (*Rule, error)
		want string
	}{
		{"a ClusterRule", func() (*Rule, error) {
			src := strings.NewReplacer("kind: Rule", "kind: ClusterRule", "  namespace: team-a\n", "").Replace(withSA)
			return ParseObject(object(t, src))
		}, "clusterrule/restart: spec.serviceAccountName: only a Rule (a team's, in a namespace) acts as a ServiceAccount; a ClusterRule or a rule file acts as kreact's own"},
		{"a rule file", func() (*Rule, error) {
			src := strings.NewReplacer("  namespace: team-a\n", "", "  annotations: {kreact.dev/description: restarts on config change}\n", "").Replace(withSA)
			rs, err := Parse("rule.yaml", []byte(src))
			if len(rs) > 0 {
				return rs[0], err
			}
			return nil, err
		}, "rule.yaml:9:23: spec.serviceAccountName: only a Rule (a team's, in a namespace) acts as a ServiceAccount"},
		{"a name that cannot be one", func() (*Rule, error) {
			return ParseObject(object(t, strings.Replace(withSA, "restarter", "Not_A_Name", 1)))
		}, `rule/team-a/restart: spec.serviceAccountName: "Not_A_Name" is not a ServiceAccount name`},
		{"not a string", func() (*Rule, error) {
			return ParseObject(object(t, strings.Replace(withSA, "restarter", "[a]", 1)))
		}, "rule/team-a/restart: spec.serviceAccountName: expected a string"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.rule()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
