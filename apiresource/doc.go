// Package apiresource holds Resource, the description of one API resource
// the server serves (its GVR, kind, scope, short names and verbs), which
// every stage of kreact passes along: discovery produces it, restmapper
// resolves names to it, informers and actions are keyed by it.
//
// It is a leaf package, so that the packages along an event's path can
// share the type without depending on discovery; its one function, Path,
// is the URL path of a resource's objects.
// A Resource is a value: copies share their slices, which nobody modifies.
package apiresource
