package cmdline

import (
	"errors"
	"strings"
	"testing"
)

func TestShardFlags(t *testing.T) {
	for _, c := range []struct {
		args    []string
		leader  bool
		wantErr string
	}{
		{args: nil},
		{args: []string{"--shards"}},
		{args: []string{"--shards", "--shard-key", "namespace"}},
		{args: []string{"--shard-key", "nope"}}, // not checked without --shards
		{args: []string{"--shards"}, leader: true, wantErr: "--shards and --leader-elect exclude each other"},
		{args: []string{"--shards", "--shard-key", "name"}, wantErr: `--shard-key must be uid or namespace, not "name"`},
		{args: []string{"--shards", "--shard-renew-period", "8s"}, wantErr: "--shard-renew-period (8s) must be positive and less than half --shard-lease-duration (15s)"},
		{args: []string{"--shards", "--shard-group="}, wantErr: "--shard-group must not be empty"},
	} {
		var s ShardFlags
		fs := NewFlagSet("run", "", "")
		s.Register(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := s.Validate(c.leader)
		var ue *UsageError
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%q: Validate = %v", c.args, err)
		case c.wantErr != "" && (!errors.As(err, &ue) || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%q: Validate = %v, want a usage error containing %q", c.args, err, c.wantErr)
		}
		if plan := s.Plan(); plan.Sharded != s.Enabled || plan.ShardByNamespace != (s.Key == "namespace") {
			t.Errorf("%q: Plan = %+v", c.args, plan)
		}
	}
}
