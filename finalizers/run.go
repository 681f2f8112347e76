package finalizers

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/kreact/kreact/apiresource"
)

// RunOptions configure Run.
type RunOptions struct {
	// Name names a resource as the output does (restmapper.Mapper.Name).
	Name func(apiresource.Resource) string
	// Where says the namespaces the targets cover, as the output says
	// them ("in every namespace").
	Where string
	// FromFiles says the targets are the resources the rule's files
	// watch. Without them the objects are the only place that knows the
	// rule, and none carrying its finalizer is an *UnknownRuleError.
	FromFiles bool
	// Wait is how long to watch the released objects for the finalizer's
	// return (WaitBack); zero does not watch.
	Wait time.Duration
}

// UnknownRuleError is Run's error when no object of the targets carried
// the rule's finalizer and nothing but the objects named the rule (see
// NotCarried): a mistake in what the user named.
type UnknownRuleError struct{ Err error }

func (e *UnknownRuleError) Error() string { return e.Err.Error() }
func (e *UnknownRuleError) Unwrap() error { return e.Err }

// Run is `kreact finalizers release` once its targets are known: it
// releases rule's finalizer from the targets (Release), writing to w the
// resources scanned, each object released and their count, then watches
// the released objects for opts.Wait (WaitBack) and writes those that
// carry the finalizer again, which is an error: a kreact still runs the
// rule.
func Run(ctx context.Context, client dynamic.Interface, rule string, targets []Target, w io.Writer, opts RunOptions) error {
	fin := Name(rule)
	// An object as the output names it: its resource, namespace/name.
	object := func(t Target, obj *unstructured.Unstructured) string {
		return opts.Name(t.Resource) + " " + cache.MetaObjectToName(obj).String()
	}
	names := make([]string, len(targets))
	for i, t := range targets {
		names[i] = opts.Name(t.Resource)
	}
	fmt.Fprintf(w, "releasing %s from %s %s\n", fin, strings.Join(names, ", "), opts.Where)
	released := map[types.UID]bool{}
	n, err := Release(ctx, client, rule, targets, ReleaseOptions{
		Released: func(t Target, obj *unstructured.Unstructured) {
			released[obj.GetUID()] = true
			fmt.Fprintln(w, object(t, obj), "released")
		},
	})
	fmt.Fprintf(w, "%s released from %s\n", Objects(n), fin)
	if err != nil {
		return fmt.Errorf("finalizers release: some objects still carry %s:\n%w", fin, err)
	}
	if n == 0 && !opts.FromFiles {
		return &UnknownRuleError{NotCarried(ctx, client, rule, targets, strings.Join(names, ", "), opts.Where)}
	}
	if n == 0 || opts.Wait == 0 {
		return nil
	}
	back, err := WaitBack(ctx, client, rule, targets, released, opts.Wait)
	if err != nil {
		return fmt.Errorf("finalizers release: look for the finalizer on the released objects: %w", err)
	}
	if len(back) == 0 {
		return nil
	}
	for _, b := range back {
		fmt.Fprintln(w, object(b.Target, b.Object), "has", fin, "again")
	}
	return fmt.Errorf("finalizers release: %s came back on %d of the %s released: kreact still runs rule %s and puts it back; "+
		"stop kreact, or remove the rule from its rule set (which releases its finalizers by itself), then run this again",
		fin, len(back), Objects(n), rule)
}
