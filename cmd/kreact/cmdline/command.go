package cmdline

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// Command is one of kreact's commands: its name, its line in the
// overview, and its run, which takes the arguments after its name.
type Command struct {
	Name, Summary string
	Run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// Main runs the command of commands that args name with the rest of
// args, and returns the exit code of its error (ExitCode, which prints
// it). Without a command, or with help asked for (help, -h, --help), it
// prints overview to stdout, a format whose %s is the list of commands:
// exit 0 when asked for, 2 without a command. `kreact help CMD` is
// `kreact CMD --help`, and `kreact --version` is `kreact version`. An
// unknown command is a usage mistake.
func Main(ctx context.Context, commands []Command, overview string, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		// `kreact help run` is `kreact run --help`; `kreact help --help`
		// is the overview, not a loop.
		if len(args) > 1 && !isHelp(args[1]) {
			return Main(ctx, commands, overview, []string{args[1], "--help"}, stdout, stderr)
		}
		printOverview(stdout, commands, overview)
		if len(args) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	for _, c := range commands {
		if c.Name == args[0] {
			return ExitCode(c.Run(ctx, args[1:], stdout, stderr), stderr)
		}
	}
	fmt.Fprintf(stderr, "kreact: unknown command %q; see `kreact help`\n", args[0])
	return ExitUsage
}

// isHelp reports whether arg asks for help rather than naming a command.
func isHelp(arg string) bool { return arg == "help" || arg == "-h" || arg == "--help" }

func printOverview(w io.Writer, commands []Command, overview string) {
	var list strings.Builder
	for _, c := range commands {
		fmt.Fprintf(&list, "  %-11s %s\n", c.Name, c.Summary)
	}
	fmt.Fprintf(w, overview+"\n", list.String())
}
