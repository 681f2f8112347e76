package apiresource

import (
	"slices"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Resource is one listable, watchable API resource as discovery reports it.
// It is a value type: snapshots hand out copies, never shared pointers. The
// slices it holds are shared between copies and must not be modified.
type Resource struct {
	// GVR is the group, version and plural resource name.
	GVR schema.GroupVersionResource
	// Kind is the object kind served at GVR, e.g. "Deployment".
	Kind string
	// Singular is the lower-case singular name, e.g. "deployment". When the
	// server reports none it is the lower-cased Kind, as kubectl guesses.
	Singular string
	// Namespaced is true for namespace-scoped resources.
	Namespaced bool
	// ShortNames are the kubectl short names, e.g. ["deploy"].
	ShortNames []string
	// Categories are the discovery categories, e.g. ["all"].
	Categories []string
	// Verbs are the verbs the server supports on the resource.
	Verbs []string
	// Preferred is true when GVR.Version is its group's preferred version.
	Preferred bool
	// Subresources are the subresources served under the resource's
	// objects, sorted, e.g. ["scale", "status"].
	Subresources []string
}

// HasSubresource reports whether the resource serves subresource sub
// ("status", "scale").
func (r Resource) HasSubresource(sub string) bool { return slices.Contains(r.Subresources, sub) }

// GVK returns the group, version and kind of the resource.
func (r Resource) GVK() schema.GroupVersionKind {
	return r.GVR.GroupVersion().WithKind(r.Kind)
}

// Equal reports whether r and o describe the same resource identically.
func (r Resource) Equal(o Resource) bool {
	return r.GVR == o.GVR && r.Kind == o.Kind && r.Singular == o.Singular &&
		r.Namespaced == o.Namespaced && r.Preferred == o.Preferred &&
		slices.Equal(r.ShortNames, o.ShortNames) &&
		slices.Equal(r.Categories, o.Categories) &&
		slices.Equal(r.Verbs, o.Verbs) &&
		slices.Equal(r.Subresources, o.Subresources)
}

// A Resolver resolves what rules and scripts name to resources: a name
// as kubectl takes it ("deploy", "backups.example.com"), or an object's
// apiVersion and kind (restmapper.Mapper).
type Resolver interface {
	Resolve(ref string) (Resource, error)
	ResolveKind(apiVersion, kind string) (Resource, error)
}

// Path is the URL path of an object of gvr (or, with no name, of its
// collection, in namespace or in every one), as client-go's dynamic
// client builds it: the absolute path for a REST client of the cluster's
// API paths, which actions write through and informers list and watch
// through.
func Path(gvr schema.GroupVersionResource, namespace, name, subresource string) []string {
	path := []string{"api"}
	if gvr.Group != "" {
		path = []string{"apis", gvr.Group}
	}
	path = append(path, gvr.Version)
	if namespace != "" {
		path = append(path, "namespaces", namespace)
	}
	path = append(path, gvr.Resource)
	if name != "" {
		path = append(path, name)
	}
	if subresource != "" {
		path = append(path, subresource)
	}
	return path
}
