// Package discovery keeps an in-memory picture of every resource the API
// server can list and watch, and tells subscribers which ones appeared and
// disappeared.
//
// # Why not client-go's cached discovery
//
// client-go's memory.NewMemCacheClient answers from memory after its first
// load and reports itself Fresh forever, so a DeferredDiscoveryRESTMapper on
// top of it never sees a CRD created later unless someone calls Reset. A
// watcher of arbitrary resources must see new CRDs as they come, so Cache
// decides itself when to rediscover:
//
//   - when a CustomResourceDefinition or APIService is added, updated or
//     deleted (metadata-only informers, so a CRD's large schema is never
//     downloaded). Updates count: a CRD becomes Established by an update.
//     Triggers are debounced so that installing many CRDs costs one request.
//     The informers' list-watch is the rules' informers' one (package
//     internal/resume): after an API-server outage they reconnect within a
//     second, not after client-go's reflector backoff of up to a minute, so
//     a CRD created as the server comes back is seen as promptly as ever;
//   - again shortly after a triggered refresh, and then with backoff while
//     the answer disagrees with the informers (a CRD whose resource is not
//     served yet, a deleted one still served): the API server's discovery is
//     eventually consistent and lags the CRD's Established condition;
//   - on RequestRefresh, which consumers call when a name does not resolve,
//     rate-limited so that a typo repeated in many rules costs one request;
//   - every PollInterval, the safety net for anything missed.
//
// Each refresh is one aggregated discovery request (/api and /apis with the
// apidiscovery.k8s.io/v2 media type) when the server supports it, and the
// per-group requests otherwise; client-go picks.
//
// # What is kept
//
// Only resources with both the list and the watch verbs, since kreact can
// do nothing else with a resource, and no subresources ("pods/status") as
// resources of their own: each resource records the names of its
// subresources ("status", "scale"), so that an action can target one
// only where it exists, and whether its version is the group's preferred
// one.
// A Snapshot lists resources in kubectl's priority order so that the
// restmapper package resolves ambiguous names as kubectl does.
//
// An aggregated API server that is down makes discovery fail for its group
// versions only (ErrGroupDiscoveryFailed, or "stale" in aggregated
// discovery). That is not an outage of kreact: those group versions keep
// their last known resources, one warning is logged, and subscribers are
// not told they were removed, which would stop every informer on them.
//
// # Guarantees
//
// A Cache is safe for concurrent use. Refreshes run one at a time, and a
// new Snapshot is published only when the resources changed, so the pointer
// identifies the content. Each subscriber has its own goroutine and queue:
// it receives every non-empty Diff, in publication order, never two at once,
// and a slow subscriber delays nobody else. Run returns only when every
// informer and goroutine it started has stopped, and that is soon after its
// context ends whatever the watches are doing: nothing it waits for sleeps
// through a cancellation (internal/resume says why the reflector does not).
package discovery
