package main

import (
	"context"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/kreact/kreact/cmd/kreact/cmdline"

	// spec.timeZone and CRON_TZ= need the zone database, which a
	// container built FROM scratch does not have.
	_ "time/tzdata"
)

// commands are kreact's commands, in the order the overview lists them.
func commands() []cmdline.Command {
	return []cmdline.Command{
		{Name: "run", Summary: "run reaction rules against a cluster", Run: runCmd},
		{Name: "watch", Summary: "print add/update/delete events of resources", Run: parsed("watch", watchCmd)},
		{Name: "validate", Summary: "check rule files without running them", Run: parsed("validate", validateCmd)},
		{Name: "test", Summary: "run rule tests offline, without a cluster", Run: parsed("test", testCmd)},
		{Name: "record", Summary: "record live changes and the rules' actions as a test case", Run: recordCmd},
		{Name: "preview", Summary: "show what rules would do to the cluster's objects now, without doing it", Run: parsed("preview", previewCmd)},
		{Name: "rbac", Summary: "print the least-privilege RBAC a rule set needs", Run: parsed("rbac", rbacCmd)},
		{Name: "webhooks", Summary: "print the admission webhook configurations a rule set needs", Run: parsed("webhooks", webhooksCmd)},
		{Name: "finalizers", Summary: "release RULE: remove a rule's finalizer from every object", Run: finalizersCmd},
		{Name: "explain", Summary: "ask a running kreact why its rules acted on an object, or not", Run: parsed("explain", explainCmd)},
		{Name: "version", Summary: "print the version, commit and Go version of this build", Run: parsed("version", versionCmd)},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := runMain(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// runMain runs the command that args name (cmdline.Main), with the
// overview of help/kreact.txt, and returns its exit code.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	return cmdline.Main(ctx, commands(), helpText("kreact"), args, stdout, stderr)
}
