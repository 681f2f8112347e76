package clientstack

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// refreshTimeout bounds Refresh.
const refreshTimeout = 10 * time.Second

// Served tells whether the API server serves the resource gvr now, as
// discovery last saw it.
func (s *Stack) Served(gvr schema.GroupVersionResource) bool {
	_, err := s.Mapper.Resolve(gvr.Resource + "." + gvr.Group)
	return err == nil
}

// Refresh asks the API server for its resources now, and reports whether
// it answered within 10s: a resource discovery does not know may be a
// CRD created a moment ago, not in its snapshot yet.
func (s *Stack) Refresh(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, refreshTimeout)
	defer cancel()
	return s.Discovery.Refresh(ctx) == nil
}
