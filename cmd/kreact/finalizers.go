package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kreact/kreact/clientstack"
	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/finalizers"
)

// finalizersCmd is `kreact finalizers SUBCOMMAND`.
func finalizersCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage, _, _ := strings.Cut(helpText("finalizers-release"), "\n")
	if len(args) == 0 {
		return &cmdline.UsageError{Msg: "finalizers: name a subcommand: " + usage}
	}
	switch args[0] {
	case "release":
		return parsed("finalizers release", releaseCmd)(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintf(stdout, helpText("finalizers")+"\n", usage)
		return cmdline.ErrHelp
	}
	return &cmdline.UsageError{Msg: fmt.Sprintf("finalizers: unknown subcommand %q; want: %s", args[0], usage)}
}

// releaseCmd is `kreact finalizers release`: the escape from objects that
// a rule's finalizer keeps once kreact is gone. It scans the rule's
// resources whatever the rule's namespaces and selectors, because an
// object keeps the finalizer after it leaves them.
func releaseCmd(ctx context.Context, o *cmdline.ReleaseOptions, stdout, stderr io.Writer) error {
	refs, err := o.Resources()
	if err != nil {
		return err
	}
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	stack, _, err := o.Cluster.Connect(ctx, userAgent(), logger, clientstack.Connect)
	if err != nil {
		return err
	}
	targets, err := finalizers.Targets(stack.Mapper, refs, o.Namespace)
	if err != nil {
		return &cmdline.InvalidError{Err: err}
	}
	return finalizers.Run(ctx, stack.Client, o.Rule, targets, stdout, finalizers.RunOptions{Name: stack.Mapper.Name, Where: o.Where(), FromFiles: len(o.Files) > 0, Wait: o.Wait})
}
