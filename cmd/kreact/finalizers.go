package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/cmd/kreact/cmdline"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/rules"
)

// finalizersCmd is `kreact finalizers SUBCOMMAND`.
func finalizersCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	usage, _, _ := strings.Cut(helpText("finalizers-release"), "\n")
	if len(args) == 0 {
		return &cmdline.UsageError{Msg: "finalizers: name a subcommand: " + usage}
	}
	switch args[0] {
	case "release":
		return releaseCmd(ctx, args[1:], stdout, stderr)
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
func releaseCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var o cmdline.ReleaseOptions
	if err := cmdline.Parse(commandFlags("finalizers release", stdout), args, &o); err != nil {
		return err
	}
	rule, refs := o.Rule, o.Refs
	if len(o.Files) > 0 {
		r, err := rules.Find(rule, o.Files...)
		if err != nil {
			return &cmdline.InvalidError{Err: err}
		}
		for _, w := range r.Watch {
			refs = append(refs, w.Resource)
		}
	}
	logger, err := o.Log.Logger(stderr)
	if err != nil {
		return err
	}
	stack, _, err := connect(ctx, &o.Cluster, logger, kube.Connect)
	if err != nil {
		return err
	}
	targets, err := finalizers.Targets(stack.Mapper, refs, o.Namespace)
	if err != nil {
		return &cmdline.InvalidError{Err: err}
	}

	fin, where := finalizers.Name(rule), o.Where()
	// An object as the output names it: its resource, namespace/name.
	object := func(t finalizers.Target, obj *unstructured.Unstructured) string {
		return stack.Mapper.Name(t.Resource) + " " + cache.MetaObjectToName(obj).String()
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = stack.Mapper.Name(t.Resource)
	}
	fmt.Fprintf(stdout, "releasing %s from %s %s\n", fin, strings.Join(names, ", "), where)
	released := map[types.UID]bool{}
	n, err := finalizers.Release(ctx, stack.Client, rule, targets, finalizers.ReleaseOptions{
		Released: func(t finalizers.Target, obj *unstructured.Unstructured) {
			released[obj.GetUID()] = true
			fmt.Fprintln(stdout, object(t, obj), "released")
		},
	})
	fmt.Fprintf(stdout, "%s released from %s\n", finalizers.Objects(n), fin)
	if err != nil {
		return fmt.Errorf("finalizers release: some objects still carry %s:\n%w", fin, err)
	}
	if n == 0 && len(o.Files) == 0 {
		// Without the rule's files, the objects are the only place that
		// knows the rule: none carries its finalizer.
		return &cmdline.InvalidError{Err: finalizers.NotCarried(ctx, stack.Client, rule, targets, strings.Join(names, ", "), where)}
	}
	if n == 0 || o.Wait == 0 {
		return nil
	}
	back, err := finalizers.WaitBack(ctx, stack.Client, rule, targets, released, o.Wait)
	if err != nil {
		return fmt.Errorf("finalizers release: look for the finalizer on the released objects: %w", err)
	}
	if len(back) == 0 {
		return nil
	}
	for _, b := range back {
		fmt.Fprintln(stdout, object(b.Target, b.Object), "has", fin, "again")
	}
	return fmt.Errorf("finalizers release: %s came back on %d of the %s released: kreact still runs rule %s and puts it back; "+
		"stop kreact, or remove the rule from its rule set (which releases its finalizers by itself), then run this again",
		fin, len(back), finalizers.Objects(n), rule)
}
