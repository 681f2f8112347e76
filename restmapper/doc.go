// Package restmapper turns the resource names people write in rules and on
// the command line into the exact resource to watch, the way kubectl does.
//
// # Why not client-go's REST mappers
//
// client-go's DeferredDiscoveryRESTMapper sits on a cached discovery
// client that never notices a new CRD until someone calls Reset, and its
// shortcut expander asks discovery again on every lookup. Mapper instead
// reads the snapshot of a discovery.Source (a *discovery.Cache, which
// follows CRDs as they come and go, or a fixed NewStatic source offline),
// and rebuilds its view only when that snapshot changes. It answers with a
// apiresource.Resource, which carries everything the rest of kreact needs:
// GVR, kind, scope, verbs.
//
// # kubectl's rules, kept on purpose
//
// A reference is tried as kubectl's resource.Builder tries it: first as a
// resource, "name[.version.group]" then "name[.group]" (plural, singular,
// then short names, then a group prefix such as "storageclasses.storage"),
// then as a kind. Among matches the priority order of discovery decides:
// the core group first (so "events" is v1 events, not events.k8s.io), then
// groups in the server's order, the preferred version first. A test checks
// the Mapper against client-go's own priority mapper and shortcut expander
// for every form of every built-in and test resource. Two differences are
// deliberate: a kind without a group is looked for in every group, and a
// short name keeps a version written with it. Kinds and names are matched
// case-insensitively, and "apps/v1 Deployment" (a manifest's apiVersion and
// kind) is accepted too.
//
// # Misses
//
// A name that matches nothing is usually a typo, sometimes a CRD created a
// moment ago. The Mapper answers with a *NotFoundError that suggests up to
// three close names (edit distance over plural, singular and short names
// and kinds) and asks the source for one refresh, which the Cache
// rate-limits. The negative answer is cached until the snapshot changes, so
// a typo in a rule evaluated on every event costs no requests.
//
// A reference longer than MaxReferenceLength (512 bytes, well above any
// Kubernetes name) is refused before any matching, and the edit distances
// are counted only up to the few edits a suggestion may be away, so that
// names whose lengths differ by more are passed over without aligning
// them: what a user wrote costs time linear in its length, whatever it is.
// Messages quote at most the first 100 bytes of a reference.
//
// # Offline
//
// Builtin is the table of resources a kube-apiserver serves, generated from
// the discovery of the API server the tests run (go generate ./restmapper)
// and checked against it by a test; ResourcesFromCRD adds CRDs read from
// YAML. Together with NewStatic they let kreact test and validate rules
// without a cluster.
package restmapper
