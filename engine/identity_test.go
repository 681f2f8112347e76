package engine_test

import (
	"strings"
	"testing"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/rules"
)

func TestIdentityServiceAccount(t *testing.T) {
	team := func(sa string) *rules.Rule {
		return &rules.Rule{Name: "team-a.r", Source: "rule/team-a/r", Namespace: "team-a", ServiceAccountName: sa}
	}
	admin := &rules.Rule{Name: "r", Source: "rules.yaml"}
	for _, tc := range []struct {
		name    string
		id      engine.Identity
		rule    *rules.Rule
		want    string
		wantErr string
	}{
		{"an administrator's rule acts as kreact", engine.Identity{DefaultServiceAccount: "default", OnlyDefault: true}, admin, "", ""},
		{"the one a Rule names", engine.Identity{DefaultServiceAccount: "default"}, team("deployer"), "deployer", ""},
		{"the default for a Rule that names none", engine.Identity{DefaultServiceAccount: "default"}, team(""), "default", ""},
		{"the default named, when only it is allowed", engine.Identity{DefaultServiceAccount: "default", OnlyDefault: true}, team("default"), "default", ""},
		{"another, when only the default is allowed", engine.Identity{DefaultServiceAccount: "default", OnlyDefault: true}, team("deployer"), "",
			`rule/team-a/r: spec.serviceAccountName: "deployer" refused: kreact run --only-default-service-account lets a Rule act only as "default", the default`},
		{"the namespace's default, with no other", engine.Identity{}, team(""), "default", ""},
		{"the namespace's default only", engine.Identity{OnlyDefault: true}, team("deployer"), "",
			`rule/team-a/r: spec.serviceAccountName: "deployer" refused: kreact run --only-default-service-account lets a Rule act only as "default", the default`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.id.ServiceAccount(tc.rule)
			if got != tc.want {
				t.Errorf("ServiceAccount = %q, want %q", got, tc.want)
			}
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("error %v, want none", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Errorf("error %v, want %q", err, tc.wantErr)
			}
		})
	}
	if u := engine.ServiceAccountUser("team-a", "deployer"); u != "system:serviceaccount:team-a:deployer" {
		t.Errorf("ServiceAccountUser = %q", u)
	}
}
