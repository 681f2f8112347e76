package cmdline

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLeaderFlags(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{name: "defaults", args: []string{"--leader-elect"}},
		{name: "short durations", args: []string{"--leader-elect", "--leader-elect-lease-duration=2s", "--leader-elect-renew-deadline=1500ms", "--leader-elect-retry-period=300ms"}},
		{name: "renew not below lease", args: []string{"--leader-elect", "--leader-elect-renew-deadline=15s"}, wantErr: "--leader-elect-lease-duration (15s) must be more than --leader-elect-renew-deadline (15s)"},
		{name: "retry too long", args: []string{"--leader-elect", "--leader-elect-retry-period=9s"}, wantErr: "--leader-elect-renew-deadline (10s) must be more than 1.2 × --leader-elect-retry-period (9s)"},
		{name: "empty name", args: []string{"--leader-elect", "--leader-elect-name="}, wantErr: "--leader-elect-name must not be empty"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var l LeaderFlags
			fs := NewFlagSet("run", "", "")
			l.Register(fs)
			if err := fs.Parse(c.args); err != nil {
				t.Fatal(err)
			}
			err := l.Validate()
			var ue *UsageError
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("validate = %v", err)
			case c.wantErr != "" && (err == nil || !errors.As(err, &ue) || !strings.Contains(err.Error(), c.wantErr)):
				t.Errorf("validate = %v, want a usage error containing %q", err, c.wantErr)
			}
		})
	}
	var l LeaderFlags
	fs := NewFlagSet("run", "", "")
	l.Register(fs)
	if err := fs.Parse(nil); err != nil {
		t.Fatal(err)
	}
	if l.Enabled || l.Name != "kreact" || l.Namespace != "" || l.LeaseDuration != 15*time.Second || l.RenewDeadline != 10*time.Second || l.RetryPeriod != 2*time.Second {
		t.Errorf("defaults = %+v", l)
	}
}
