package cmdline

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestExitCode(t *testing.T) {
	for _, c := range []struct {
		err    error
		code   int
		stderr string
	}{
		{nil, ExitOK, ""},
		{fmt.Errorf("run: %w", ErrHelp), ExitOK, ""},
		{ErrTestsFailed, ExitError, ""},
		{&UsageError{Msg: "run: no rule files"}, ExitUsage, "kreact: run: no rule files\n"},
		{fmt.Errorf("wrapped: %w", &InvalidError{errors.New("a.yaml:1:2: bad")}), ExitInvalid, "wrapped: a.yaml:1:2: bad\n"},
		{&ClusterError{errors.New("no route")}, ExitCluster, "kreact: no route\n"},
		{errors.New("boom"), ExitError, "kreact: boom\n"},
	} {
		var stderr strings.Builder
		if code := ExitCode(c.err, &stderr); code != c.code || stderr.String() != c.stderr {
			t.Errorf("ExitCode(%v) = %d, printed %q; want %d, %q", c.err, code, stderr.String(), c.code, c.stderr)
		}
	}
}
