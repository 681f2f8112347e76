package restmapper

import (
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/discovery"
)

// static is a discovery.Source whose snapshot never changes.
type static struct {
	snap *discovery.Snapshot
}

var _ discovery.Source = (*static)(nil)

// NewStatic returns a Source that always serves resources, for offline
// tools (kreact test, kreact validate) and unit tests: typically Builtin()
// plus the CRDs of ResourcesFromCRD. The resources are put in priority
// order (see prioritize): the core group first, then groups in the order
// given, the preferred version first. Its Subscribe never calls fn and its
// RequestRefresh does nothing.
func NewStatic(resources []apiresource.Resource) discovery.Source {
	return &static{snap: &discovery.Snapshot{Resources: prioritize(resources)}}
}

func (s *static) Snapshot() *discovery.Snapshot         { return s.snap }
func (s *static) Subscribe(func(discovery.Diff)) func() { return func() {} }
func (s *static) RequestRefresh()                       {}
