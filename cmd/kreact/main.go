package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/kreact/kreact/cmd/kreact/cmdline"

	// spec.timeZone and CRON_TZ= need the zone database, which a
	// container built FROM scratch does not have.
	_ "time/tzdata"
)

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

func commands() []command {
	return []command{
		{"run", "run reaction rules against a cluster", runCmd},
		{"watch", "print add/update/delete events of resources", parsed("watch", watchCmd)},
		{"validate", "check rule files without running them", parsed("validate", validateCmd)},
		{"test", "run rule tests offline, without a cluster", parsed("test", testCmd)},
		{"record", "record live changes and the rules' actions as a test case", recordCmd},
		{"preview", "show what rules would do to the cluster's objects now, without doing it", parsed("preview", previewCmd)},
		{"rbac", "print the least-privilege RBAC a rule set needs", parsed("rbac", rbacCmd)},
		{"webhooks", "print the admission webhook configurations a rule set needs", parsed("webhooks", webhooksCmd)},
		{"finalizers", "release RULE: remove a rule's finalizer from every object", finalizersCmd},
		{"explain", "ask a running kreact why its rules acted on an object, or not", parsed("explain", explainCmd)},
		{"version", "print the version, commit and Go version of this build", parsed("version", versionCmd)},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain dispatches to a subcommand and maps its error to an exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || isHelp(args[0]) {
		// `kreact help run` is `kreact run --help`; `kreact help --help`
		// is the overview, not a loop.
		if len(args) > 1 && !isHelp(args[1]) {
			return runMain(ctx, []string{args[1], "--help"}, stdout, stderr)
		}
		printHelp(stdout)
		if len(args) == 0 {
			return cmdline.ExitUsage
		}
		return cmdline.ExitOK
	}
	if args[0] == "--version" {
		args[0] = "version"
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return cmdline.ExitCode(c.run(ctx, args[1:], stdout, stderr), stderr)
		}
	}
	fmt.Fprintf(stderr, "kreact: unknown command %q; see `kreact help`\n", args[0])
	return cmdline.ExitUsage
}

// isHelp reports whether arg asks for help rather than naming a command.
func isHelp(arg string) bool { return arg == "help" || arg == "-h" || arg == "--help" }

func printHelp(w io.Writer) {
	var list strings.Builder
	for _, c := range commands() {
		fmt.Fprintf(&list, "  %-11s %s\n", c.name, c.summary)
	}
	fmt.Fprintf(w, helpText("kreact")+"\n", list.String())
}
