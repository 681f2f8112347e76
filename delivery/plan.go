package delivery

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/dynamicinformer"
	"github.com/kreact/kreact/projection"
	"github.com/kreact/kreact/rules"
)

// Informer is one informer a rule needs.
type Informer struct {
	// Key selects what the informer lists and watches.
	Key dynamicinformer.Key
	// Resource is the resource it watches.
	Resource apiresource.Resource
	// Handled is true for spec.watch entries: their changes reach the
	// rule's handlers. The informers of spec.reads only serve reads.
	Handled bool
	// Entry is, for a Handled informer, the index of its spec.watch
	// entry.
	Entry int
	// Readable is true when the informer has no selectors and keeps
	// whole objects, so that it holds every object of its namespace (""
	// for all) as it is and can answer kreact.get and kreact.list.
	Readable bool
	// Fields is what the informer keeps of each object: the watch
	// entry's projection (rules.Watch.Projection), whole objects for
	// the informers of spec.reads and for a watch that also serves them.
	Fields projection.Fields
	// NamespaceReadsOnly restricts a Readable informer to reads that name
	// a namespace: it is sharded by namespace, so it holds whole
	// namespaces, but not all of them.
	NamespaceReadsOnly bool
}

// PlanOptions change the informers of a plan. The zero value is Plan's.
type PlanOptions struct {
	// Sharded shards the spec.watch informers (Key.Sharded). They then
	// serve no reads, except with ShardByNamespace, where those of
	// namespaced resources serve reads that name a namespace. spec.reads
	// informers are never sharded, so reads stay complete.
	Sharded bool
	// ShardByNamespace is set when namespaced resources are sharded by
	// namespace rather than by UID.
	ShardByNamespace bool
	// Handlers, if set, are the script's: a rule that has no use for its
	// spec.watch informers (NeedsWatch: one with admission handlers
	// only) gets none, rather than cache every object for nothing; its
	// spec.reads keep theirs. Unset, every entry gets one.
	Handlers Handlers
}

// Plan lists the informers of a resolved rule, in a stable order: one per
// watched namespace of each spec.watch entry, then an all-namespaces one
// for each spec.reads resource that no selector-free, all-namespaces watch
// already covers.
//
// Reads see whole objects: a watch with spec.watch[].fields serves no
// reads, so that kreact.get and kreact.list never return objects cut
// down to another entry's paths. When the rule lists the resource of a
// selector-free, all-namespaces projected watch in spec.reads, that
// watch keeps whole objects and serves the reads: its informer (the same
// key as the reads informer) would have to keep them anyway.
func Plan(res *rules.Resolved) []Informer { return PlanWith(res, PlanOptions{}) }

// PlanWith is Plan with options; see PlanOptions.
func PlanWith(res *rules.Resolved, opts PlanOptions) []Informer {
	var plan []Informer
	allNamespaces := map[schema.GroupResource]bool{}
	reads := map[schema.GroupResource]bool{}
	for _, r := range res.Reads {
		reads[r.GVR.GroupResource()] = true
	}
	watches := res.Watch
	if opts.Handlers != nil && !NeedsWatch(res.Rule, opts.Handlers) {
		watches = nil
	}
	for entry, w := range watches {
		namespaces := w.Watch.Namespaces
		if len(namespaces) == 0 {
			namespaces = []string{""}
		}
		unselected := w.Watch.LabelSelector == "" && w.Watch.FieldSelector == ""
		for _, ns := range namespaces {
			key := dynamicinformer.Key{GVR: w.Resource.GVR, Namespace: ns, LabelSelector: w.Watch.LabelSelector, FieldSelector: w.Watch.FieldSelector}
			fields := w.Watch.Projection()
			if unselected && ns == "" && !opts.Sharded && reads[w.Resource.GVR.GroupResource()] {
				fields = projection.Fields{}
			}
			readable := unselected && fields.Whole()
			inf := Informer{Key: key, Resource: w.Resource, Handled: true, Entry: entry, Readable: readable, Fields: fields}
			if opts.Sharded {
				inf.Key.Sharded = true
				inf.Readable = readable && opts.ShardByNamespace && w.Resource.Namespaced
				inf.NamespaceReadsOnly = inf.Readable
				plan = append(plan, inf)
				continue
			}
			plan = append(plan, inf)
			if readable && ns == res.Rule.Namespace {
				allNamespaces[w.Resource.GVR.GroupResource()] = true
			}
		}
	}
	for _, r := range res.Reads {
		// A team's Rule reads its own namespace only; the others, all.
		if gr := r.GVR.GroupResource(); !allNamespaces[gr] {
			allNamespaces[gr] = true
			plan = append(plan, Informer{Key: dynamicinformer.Key{GVR: r.GVR, Namespace: res.Rule.Namespace}, Resource: r, Readable: true})
		}
	}
	return plan
}

// Reader returns the index in plan of the informer that answers a read of
// gvr in namespace ("" for all namespaces): the rule must be allowed to
// read gvr, and a readable informer must hold that namespace.
func Reader(res *rules.Resolved, plan []Informer, gvr schema.GroupVersionResource, namespace string) (int, error) {
	if err := res.Readable(gvr); err != nil {
		return -1, err
	}
	gr := gvr.GroupResource()
	// Complete informers first, then those sharded by namespace.
	for _, partial := range []bool{false, true} {
		for i, inf := range plan {
			if !inf.Readable || inf.NamespaceReadsOnly != partial || inf.Key.GVR.GroupResource() != gr {
				continue
			}
			if partial && namespace == "" {
				continue
			}
			if ns := inf.Key.Namespace; ns == "" || ns == namespace {
				return i, nil
			}
		}
	}
	where := "all namespaces"
	if namespace != "" {
		where = fmt.Sprintf("namespace %q", namespace)
	}
	return -1, fmt.Errorf("rule %q does not cache %s in %s: add it to spec.reads (watches with selectors, fields or other namespaces do not serve reads)",
		res.Rule.Name, gr, where)
}
