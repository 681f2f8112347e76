package cmdline

import (
	"context"
	"io"
	"strings"
	"testing"
)

// Main runs the command named with the rest of the arguments and maps its
// error to the exit code; help, no command and an unknown one are its
// own, and never recurse.
func TestMainRunsTheCommandNamed(t *testing.T) {
	var ran []string
	commands := []Command{
		{Name: "run", Summary: "run rules", Run: func(_ context.Context, args []string, stdout, _ io.Writer) error {
			ran = append(ran, "run "+strings.Join(args, " "))
			if len(args) > 0 && args[0] == "--help" {
				_, _ = io.WriteString(stdout, "Usage: kreact run\n")
				return ErrHelp
			}
			return nil
		}},
		{Name: "version", Summary: "print the version", Run: func(_ context.Context, args []string, stdout, _ io.Writer) error {
			ran = append(ran, "version "+strings.Join(args, " "))
			return &UsageError{Msg: "version: unexpected argument"}
		}},
	}
	const overview = "kreact\n\nCommands:\n%s"
	const list = "kreact\n\nCommands:\n  run         run rules\n  version     print the version\n\n"
	for _, c := range []struct {
		args                 []string
		code                 int
		stdout, stderr, runs string
	}{
		{args: nil, code: ExitUsage, stdout: list},
		{args: []string{"help"}, code: ExitOK, stdout: list},
		{args: []string{"-h"}, code: ExitOK, stdout: list},
		{args: []string{"help", "--help"}, code: ExitOK, stdout: list},
		{args: []string{"help", "help"}, code: ExitOK, stdout: list},
		{args: []string{"help", "run"}, code: ExitOK, stdout: "Usage: kreact run\n", runs: "run --help"},
		{args: []string{"run", "-f", "r.yaml"}, code: ExitOK, runs: "run -f r.yaml"},
		{args: []string{"--version", "x"}, code: ExitUsage, stderr: "kreact: version: unexpected argument\n", runs: "version x"},
		{args: []string{"rnu"}, code: ExitUsage, stderr: "kreact: unknown command \"rnu\"; see `kreact help`\n"},
	} {
		ran = nil
		var stdout, stderr strings.Builder
		code := Main(t.Context(), commands, overview, c.args, &stdout, &stderr)
		if code != c.code || stdout.String() != c.stdout || stderr.String() != c.stderr || strings.Join(ran, "; ") != c.runs {
			t.Errorf("kreact %s: exit %d, stdout %q, stderr %q, ran %q; want %d, %q, %q, %q",
				strings.Join(c.args, " "), code, stdout.String(), stderr.String(), ran, c.code, c.stdout, c.stderr, c.runs)
		}
	}
}
