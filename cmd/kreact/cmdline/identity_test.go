package cmdline

import (
	"errors"
	"strings"
	"testing"

	"github.com/kreact/kreact/engine"
)

// kreact run's identity flags become the engine's Identity; a team's Rule
// acts as its namespace's "default" ServiceAccount unless told otherwise.
func TestRunIdentityFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		want    engine.Identity
		wantErr string
	}{
		{args: nil, want: engine.Identity{DefaultServiceAccount: "default"}},
		{args: []string{"--default-service-account", "kreact-rules", "--only-default-service-account"},
			want: engine.Identity{DefaultServiceAccount: "kreact-rules", OnlyDefault: true}},
		{args: []string{"--default-service-account="}, wantErr: `run: --default-service-account "": `},
		{args: []string{"--default-service-account", "Not_A_Name"}, wantErr: `run: --default-service-account "Not_A_Name": `},
	} {
		var o RunOptions
		err := Parse(NewFlagSet("run", "", ""), append([]string{"-f", "rules.yaml"}, c.args...), &o)
		var ue *UsageError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: %v", c.args, err)
		case c.wantErr != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: %v, want a usage error containing %q", c.args, err, c.wantErr)
		case c.wantErr == "" && o.Tenants.Identity != c.want:
			t.Errorf("%q: Identity = %+v, want %+v", c.args, o.Tenants.Identity, c.want)
		}
	}
}
