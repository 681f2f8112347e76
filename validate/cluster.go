package validate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/discovery"
	"github.com/kreact/kreact/internal/editdistance"
	"github.com/kreact/kreact/rules"
)

var namespacesGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// CheckCluster adds to r.Problems, still sorted, the warnings of
// ClusterWarnings about r.Resolved, read from the cluster of cfg. An error
// of the cluster is returned as it is, and adds nothing.
func (r *Result) CheckCluster(ctx context.Context, cfg *rest.Config) error {
	client, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	warnings, err := ClusterWarnings(ctx, client, r.Resolved)
	if err != nil {
		return err
	}
	r.Problems = append(r.Problems, warnings...)
	r.Problems.Sort()
	return nil
}

// ClusterWarnings warns, for rules checked against a cluster (validate
// --kubeconfig), about what makes a rule silent there: a namespace of
// spec.watch[].namespaces that does not exist (with the names that come
// close), and a spec.watch entry whose selectors match no object (with
// the values the cluster has for a label key the selector names, when
// one differs only by case). They are warnings: the namespace or the
// objects may come later. It reads with client: one list of namespaces,
// and one or two lists of at most a few objects per selector and
// namespace. An error of the cluster is returned as it is.
func ClusterWarnings(ctx context.Context, client dynamic.Interface, resolved []*rules.Resolved) (diag.ErrorList, error) {
	var out diag.ErrorList
	var existing []string // the cluster's namespaces, listed once
	listed := false
	for _, res := range resolved {
		r := res.Rule
		for i, rw := range res.Watch {
			w := rw.Watch
			path := fmt.Sprintf("spec.watch[%d]", i)
			var missing []string
			if len(w.Namespaces) > 0 && !listed {
				list, err := client.Resource(namespacesGVR).List(ctx, metav1.ListOptions{})
				if err != nil {
					return out, fmt.Errorf("list namespaces: %w", err)
				}
				for _, ns := range list.Items {
					existing = append(existing, ns.GetName())
				}
				listed = true
			}
			for _, ns := range w.Namespaces {
				if slices.Contains(existing, ns) {
					continue
				}
				missing = append(missing, ns)
				msg := fmt.Sprintf("%s.namespaces: namespace %q does not exist on the cluster, so the rule sees nothing there", path, ns)
				if near := closest(ns, existing); near != "" {
					msg += fmt.Sprintf(" (did you mean %q?)", near)
				}
				warn(&out, r, w.NamespacesPos, msg)
			}
			if w.LabelSelector == "" && w.FieldSelector == "" {
				continue
			}
			namespaces := w.Namespaces
			if len(namespaces) == 0 {
				namespaces = []string{""}
			}
			found := false
			for _, ns := range namespaces {
				if slices.Contains(missing, ns) {
					continue
				}
				list, err := client.Resource(rw.Resource.GVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: w.LabelSelector, FieldSelector: w.FieldSelector, Limit: 1})
				if err != nil {
					return out, fmt.Errorf("list %s: %w", rw.Resource.GVR.GroupResource(), err)
				}
				if len(list.Items) > 0 {
					found = true
					break
				}
			}
			if found {
				continue
			}
			where := "on the cluster"
			if len(w.Namespaces) > 0 {
				where = "in namespaces " + strings.Join(w.Namespaces, ", ")
			}
			if w.LabelSelector != "" {
				msg := fmt.Sprintf("%s.labelSelector: %q matches no %s %s (yet)", path, w.LabelSelector, rw.Resource.GVR.GroupResource(), where)
				hints, err := labelHints(ctx, client, rw.Resource.GVR, namespaces, missing, w.LabelSelector)
				if err != nil {
					return out, err
				}
				if len(hints) > 0 {
					msg += "; label values are case-sensitive, and the cluster has " + strings.Join(hints, ", ")
				}
				warn(&out, r, w.LabelSelectorPos, msg)
			} else {
				warn(&out, r, w.FieldSelectorPos, fmt.Sprintf("%s.fieldSelector: %q matches no %s %s (yet)", path, w.FieldSelector, rw.Resource.GVR.GroupResource(), where))
			}
		}
	}
	return out, nil
}

// labelHints returns the labels key=value of the objects (a few) that
// carry a key the selector requires with a value equal to a wanted one
// but for case.
func labelHints(ctx context.Context, client dynamic.Interface, gvr schema.GroupVersionResource, namespaces, missing []string, selector string) ([]string, error) {
	sel, err := labels.Parse(selector)
	if err != nil {
		return nil, nil
	}
	reqs, _ := sel.Requirements()
	var hints []string
	for _, req := range reqs {
		for _, ns := range namespaces {
			if slices.Contains(missing, ns) {
				continue
			}
			list, err := client.Resource(gvr).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: req.Key(), Limit: 100})
			if apierrors.IsBadRequest(err) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("list %s: %w", gvr.GroupResource(), err)
			}
			for _, item := range list.Items {
				v := item.GetLabels()[req.Key()]
				for _, want := range req.ValuesUnsorted() {
					if v != want && strings.EqualFold(v, want) {
						hints = append(hints, req.Key()+"="+v)
					}
				}
			}
		}
	}
	slices.Sort(hints)
	return slices.Compact(hints), nil
}

// closest returns the name of names that s is likely a misspelling of, or "".
func closest(s string, names []string) string {
	norm := func(s string) string { return strings.ToLower(strings.ReplaceAll(s, "-", "")) }
	best, bestDist := "", 3
	for _, n := range names {
		if norm(n) == norm(s) {
			return n
		}
		if d := editdistance.AtMost(s, n, 2); d < bestDist {
			best, bestDist = n, d
		}
	}
	return best
}

func warn(out *diag.ErrorList, r *rules.Rule, pos diag.Position, msg string) {
	if !pos.IsValid() {
		pos = r.Pos
	}
	pos.Rule = r.Name
	out.Warnf(pos, "rule %s: %s", diag.Quote(r.Name), msg)
}

// Discover returns the resources the API server of cfg serves, which
// NewMapper takes to resolve names as that cluster does.
func Discover(ctx context.Context, cfg *rest.Config) ([]apiresource.Resource, error) {
	dc, err := cgdiscovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cache := discovery.New(dc, discovery.Options{})
	if err := cache.Refresh(ctx); err != nil {
		return nil, fmt.Errorf("discover the API of %s: %w", cfg.Host, err)
	}
	return cache.Snapshot().Resources, nil
}
