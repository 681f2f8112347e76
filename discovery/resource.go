package discovery

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/apiresource"
)

// Snapshot is an immutable view of every resource discovery knows about.
// Callers must not modify it.
//
// A *Cache hands out the same *Snapshot until the discovered resources
// change, so consumers may key caches on the pointer.
type Snapshot struct {
	// Resources holds every resource in priority order, the order kubectl
	// uses to pick between equally named resources: groups in the order the
	// server lists them (the core group first, then by APIService priority),
	// within a group the preferred version first, then the other versions in
	// the server's order.
	Resources []apiresource.Resource
}

// Lookup returns the resource served at gvr, if any.
func (s *Snapshot) Lookup(gvr schema.GroupVersionResource) (apiresource.Resource, bool) {
	if s == nil {
		return apiresource.Resource{}, false
	}
	for _, r := range s.Resources {
		if r.GVR == gvr {
			return r, true
		}
	}
	return apiresource.Resource{}, false
}

// equal reports whether both snapshots hold the same resources in the same
// order.
func (s *Snapshot) equal(o *Snapshot) bool {
	return slices.EqualFunc(s.Resources, o.Resources, apiresource.Resource.Equal)
}

// Diff is what changed between two snapshots, compared by GVR. Added is in
// the new snapshot's order, Removed in the old one's. Subscribers share a
// Diff and must not modify it.
type Diff struct {
	Added   []apiresource.Resource
	Removed []apiresource.Resource
}

// Empty reports whether the diff holds no change.
func (d Diff) Empty() bool { return len(d.Added) == 0 && len(d.Removed) == 0 }

// diff returns the resources added and removed between old and next.
func diff(old, next *Snapshot) Diff {
	had := make(map[schema.GroupVersionResource]bool, len(old.Resources))
	for _, r := range old.Resources {
		had[r.GVR] = true
	}
	has := make(map[schema.GroupVersionResource]bool, len(next.Resources))
	var d Diff
	for _, r := range next.Resources {
		has[r.GVR] = true
		if !had[r.GVR] {
			d.Added = append(d.Added, r)
		}
	}
	for _, r := range old.Resources {
		if !has[r.GVR] {
			d.Removed = append(d.Removed, r)
		}
	}
	return d
}

// Source is what consumers of discovery need: the current snapshot, change
// notifications and a way to ask for a refresh. *Cache implements it; tests
// and offline tools may provide a static one (restmapper.NewStatic).
type Source interface {
	// Snapshot returns the latest snapshot. It never blocks on the network
	// and never returns nil.
	Snapshot() *Snapshot
	// Subscribe calls fn with every non-empty diff, in order, from a single
	// goroutine, until the returned cancel func is called. The first diff
	// is relative to the snapshot current when Subscribe was called. fn must
	// not block for long.
	Subscribe(fn func(Diff)) (cancel func())
	// RequestRefresh asks for a rediscovery soon. It is rate-limited and
	// never blocks.
	RequestRefresh()
}
