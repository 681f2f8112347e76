package cmdline

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/record"
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
		{fmt.Errorf("preview: %w", ErrChanges), ExitChanges, ""},
		{&UsageError{Msg: "run: no rule files"}, ExitUsage, "kreact: run: no rule files\n"},
		{fmt.Errorf("wrapped: %w", &InvalidError{errors.New("a.yaml:1:2: bad")}), ExitInvalid, "wrapped: a.yaml:1:2: bad\n"},
		{&ClusterError{errors.New("no route")}, ExitCluster, "kreact: no route\n"},
		{fmt.Errorf("test: %w", errors.Join(diag.ErrorList{{Pos: diag.Position{File: "a.yaml", Line: 1, Col: 2}, Msg: "bad"}})), ExitInvalid, "test: a.yaml:1:2: bad\n"},
		{&engine.NoRulesError{Err: errors.New("no rules in r/")}, ExitInvalid, "no rules in r/\n"},
		{&record.LoadError{Err: errors.New("rule r: no such resource")}, ExitInvalid, "rule r: no such resource\n"},
		{&finalizers.UnknownRuleError{Err: errors.New("no object carries r")}, ExitInvalid, "no object carries r\n"},
		{errors.New("boom"), ExitError, "kreact: boom\n"},
	} {
		var stderr strings.Builder
		if code := ExitCode(c.err, &stderr); code != c.code || stderr.String() != c.stderr {
			t.Errorf("ExitCode(%v) = %d, printed %q; want %d, %q", c.err, code, stderr.String(), c.code, c.stderr)
		}
	}
}
