package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/cmd/kreact/tail"
	"github.com/kreact/kreact/finalizers"
	"github.com/kreact/kreact/internal/kube"
	"github.com/kreact/kreact/rules"
)

// finalizersCmd is `kreact finalizers SUBCOMMAND`.
func finalizersCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	const usage = "kreact finalizers release RULE (RESOURCE[,RESOURCE...] | -f FILE|DIR) [-n NS] [flags]"
	if len(args) == 0 {
		return &usageError{Msg: "finalizers: name a subcommand: " + usage}
	}
	switch args[0] {
	case "release":
		return releaseCmd(ctx, args[1:], stdout, stderr)
	case "-h", "--help", "help":
		fmt.Fprintf(stdout, helpText("finalizers")+"\n", usage)
		return errHelp
	}
	return &usageError{Msg: fmt.Sprintf("finalizers: unknown subcommand %q; want: %s", args[0], usage)}
}

type releaseFlags struct {
	files         []string
	namespace     string
	allNamespaces bool
	wait          time.Duration
	cluster       clusterFlags
	log           logFlags
}

// releaseCmd is `kreact finalizers release`: the escape from objects that
// a rule's finalizer keeps once kreact is gone. It scans the rule's
// resources whatever the rule's namespaces and selectors, because an
// object keeps the finalizer after it leaves them.
func releaseCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var f releaseFlags
	fs := commandFlags("finalizers release", stdout)
	fs.ListVarP(&f.files, "filename", "f", "rule file or directory holding RULE, to release on the resources it watches (repeatable)")
	fs.StringVarP(&f.namespace, "namespace", "n", "", "only this namespace (default: every namespace)")
	fs.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "every namespace (the default; accepted as with kubectl)")
	fs.DurationVar(&f.wait, "wait", 5*time.Second, "then watch the released objects this long for a kreact still running the rule, which puts the finalizer back (0: do not watch)")
	f.cluster.Register(fs)
	f.log.Register(fs)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return &usageError{Msg: "finalizers release: name the rule, e.g. `kreact finalizers release secret-sync secrets`"}
	}
	rule := fs.Arg(0)
	refs := tail.Refs(fs.Args()[1:])
	switch {
	case len(refs) == 0 && len(f.files) == 0:
		return &usageError{Msg: fmt.Sprintf("finalizers release: name the resources rule %s watches (e.g. secrets), or its rule files with -f", rule)}
	case len(refs) > 0 && len(f.files) > 0:
		return &usageError{Msg: "finalizers release: name resources or give -f, not both"}
	case f.namespace != "" && f.allNamespaces:
		return &usageError{Msg: "finalizers release: -n and -A together: choose one"}
	case f.wait < 0:
		return &usageError{Msg: fmt.Sprintf("finalizers release: --wait %s: want a duration of 0 or more", f.wait)}
	}
	if errs := validation.IsDNS1123Label(rule); len(errs) > 0 {
		return &invalidError{fmt.Errorf("rule name %q: %s", rule, strings.Join(errs, "; "))}
	}
	if len(f.files) > 0 {
		r, err := rules.Find(rule, f.files...)
		if err != nil {
			return &invalidError{err}
		}
		for _, w := range r.Watch {
			refs = append(refs, w.Resource)
		}
	}
	logger, err := f.log.Logger(stderr)
	if err != nil {
		return err
	}
	cfg, _, err := f.cluster.Load(userAgent())
	if err != nil {
		return err
	}

	stack, err := kube.Connect(ctx, cfg, kube.Options{Logger: logger})
	if err != nil {
		return &clusterError{Err: err}
	}

	targets, err := finalizers.Targets(stack.Mapper, refs, f.namespace)
	if err != nil {
		return &invalidError{err}
	}

	fin := finalizers.Name(rule)
	where := "in every namespace"
	if f.namespace != "" {
		where = "in namespace " + f.namespace
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
			fmt.Fprintf(stdout, "%s %s released\n", stack.Mapper.Name(t.Resource), cache.MetaObjectToName(obj).String())
		},
	})
	fmt.Fprintf(stdout, "%s released from %s\n", finalizers.Objects(n), fin)
	if err != nil {
		return fmt.Errorf("finalizers release: some objects still carry %s:\n%w", fin, err)
	}
	if n == 0 && len(f.files) == 0 {
		// Without the rule's files, the objects are the only place that
		// knows the rule: none carries its finalizer.
		return &invalidError{finalizers.NotCarried(ctx, stack.Client, rule, targets, strings.Join(names, ", "), where)}
	}
	if n == 0 || f.wait == 0 {
		return nil
	}
	back, err := finalizers.WaitBack(ctx, stack.Client, rule, targets, released, f.wait)
	if err != nil {
		return fmt.Errorf("finalizers release: look for the finalizer on the released objects: %w", err)
	}
	if len(back) == 0 {
		return nil
	}
	for _, b := range back {
		fmt.Fprintf(stdout, "%s %s has %s again\n", stack.Mapper.Name(b.Target.Resource), cache.MetaObjectToName(b.Object).String(), fin)
	}
	return fmt.Errorf("finalizers release: %s came back on %d of the %s released: kreact still runs rule %s and puts it back; "+
		"stop kreact, or remove the rule from its rule set (which releases its finalizers by itself), then run this again",
		fin, len(back), finalizers.Objects(n), rule)
}
