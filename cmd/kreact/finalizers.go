package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
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
		watched, err := watchedBy(rule, f.files)
		if err != nil {
			return &invalidError{err}
		}
		refs = watched
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
	fmt.Fprintf(stdout, "%d %s released from %s\n", n, plural(n, "object", "objects"), fin)
	if err != nil {
		return fmt.Errorf("finalizers release: some objects still carry %s:\n%w", fin, err)
	}
	if n == 0 && len(f.files) == 0 {
		// Without the rule's files, the objects are the only place that
		// knows the rule: none carries its finalizer.
		return &invalidError{unknownRule(ctx, stack, rule, targets, strings.Join(names, ", "), where)}
	}
	if n == 0 || f.wait == 0 {
		return nil
	}
	back, err := finalizersBack(ctx, stack, rule, targets, released, f.wait)
	if err != nil {
		return fmt.Errorf("finalizers release: look for the finalizer on the released objects: %w", err)
	}
	if len(back) == 0 {
		return nil
	}
	for _, b := range back {
		fmt.Fprintf(stdout, "%s %s has %s again\n", stack.Mapper.Name(b.target.Resource), cache.MetaObjectToName(b.obj).String(), fin)
	}
	return fmt.Errorf("finalizers release: %s came back on %d of the %d %s released: kreact still runs rule %s and puts it back; "+
		"stop kreact, or remove the rule from its rule set (which releases its finalizers by itself), then run this again",
		fin, len(back), n, plural(n, "object", "objects"), rule)
}

// unknownRule is the error of a release that found no object with the
// rule's finalizer, naming the kreact finalizers those objects carry.
func unknownRule(ctx context.Context, stack *kube.Stack, rule string, targets []finalizers.Target, names, where string) error {
	err := fmt.Errorf("finalizers release: no object of %s %s carries %s: rule %s is unknown, does not watch them, or was released already",
		names, where, finalizers.Name(rule), rule)
	carried, _ := finalizers.Carried(ctx, stack.Client, targets)
	if len(carried) == 0 {
		return err
	}
	var list []string
	for _, name := range slices.Sorted(maps.Keys(carried)) {
		list = append(list, fmt.Sprintf("%s (%d %s)", name, carried[name], plural(carried[name], "object", "objects")))
	}
	return fmt.Errorf("%w; kreact finalizers there: %s", err, strings.Join(list, ", "))
}

// backObject is a released object that carries the finalizer again.
type backObject struct {
	target finalizers.Target
	obj    *unstructured.Unstructured
}

// finalizersBack lists the released objects every half second for wait,
// and returns those that carry the rule's finalizer again as soon as some
// do: a kreact that runs the rule puts it back within moments of its
// removal.
func finalizersBack(ctx context.Context, stack *kube.Stack, rule string, targets []finalizers.Target, released map[types.UID]bool, wait time.Duration) ([]backObject, error) {
	deadline := time.Now().Add(wait)
	for {
		interval := min(500*time.Millisecond, time.Until(deadline))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(interval):
		}
		var back []backObject
		for _, t := range targets {
			objs, err := finalizers.Back(ctx, stack.Client, rule, []finalizers.Target{t}, released)
			if err != nil {
				return nil, err
			}
			for _, o := range objs {
				back = append(back, backObject{t, o})
			}
		}
		if len(back) > 0 || !time.Now().Before(deadline) {
			return back, nil
		}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// watchedBy returns the resources that rule watches (its spec.watch), from
// the rule files in paths. A file that does not load is reported only when
// the rule is not found elsewhere, with the names of the rules found.
func watchedBy(rule string, paths []string) ([]string, error) {
	rs, _, loadErr := rules.LoadEach(paths...)
	var names []string
	for _, r := range rs {
		if r.Name != rule {
			names = append(names, r.Name)
			continue
		}
		var refs []string
		for _, w := range r.Watch {
			refs = append(refs, w.Resource)
		}
		return refs, nil
	}
	err := fmt.Errorf("no rule %q in %s", rule, strings.Join(paths, ", "))
	if len(names) > 0 {
		err = fmt.Errorf("%w (rules there: %s)", err, strings.Join(names, ", "))
	}
	return nil, errors.Join(err, loadErr)
}
