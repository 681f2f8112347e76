// Package resume is the ListerWatcher of every informer kreact runs: the
// rules' informers (package dynamicinformer) and discovery's CRD and
// APIService informers (package discovery). It exists because client-go's
// reflector waits after every ListAndWatch that ends with an error, or with
// an expired watch, on an exponential backoff (0.8 s doubling to 30 s,
// jittered up to 60 s, reset only after two quiet minutes) that
// SharedIndexInformer does not let anyone configure. An informer that
// lived through a few API-server restarts was blind for up to a minute
// after the last one.
//
// # What a ListWatch guarantees
//
//   - The reflector is never told about a failure that waiting cures
//     (unreachable.Is, or a 500). A List or Watch that cannot reach the
//     server is retried within a second (50 ms doubling to 1 s, jittered
//     by up to a fifth) until it can, or until its context ends.
//   - The watch handed to the reflector outlives the server's watches:
//     when one breaks or times out it opens the next from the last
//     resourceVersion it forwarded; when that version has expired (410) it
//     lists, and forwards the difference between the list and the
//     informer's cache (adds, updates, and deletes with the state the
//     cache holds), then a bookmark at the list's resourceVersion. The
//     reflector sees one long watch, and its informer sees every change,
//     deletes included.
//   - Lists are made in pages of PageSize, at the newest resourceVersion
//     (the API server serves them from its watch cache), and handed to the
//     reflector as one list: the response of an unpaginated list, held
//     whole beside the objects decoded from it, was the largest transient
//     allocation of a sync and set the heap's size for good.
//   - With Options.Shape, each object is replaced, as soon as it is
//     decoded, by what the informer caches (package dynamicinformer keeps
//     a cut-down, compact form): a list's decoded objects are let go page
//     by page, and the cache is the only record of them (below).
//   - Errors that waiting does not cure (403, 404, a bad selector) reach the
//     reflector as before, and from it the informer's watch-error handler.
//   - Streaming lists (WatchList) are turned off: the watch resumes plain
//     watches only. That also keeps the reflector away from the one sleep
//     of client-go v0.37's reflector that ignores its stop channel (the
//     backoff after a refused connection in Reflector.watchList), so an
//     informer on a ListWatch stops as soon as its context ends, whatever
//     its watch is doing: every wait here ends with the context too.
//
// # The cache as the record of what the reflector knows
//
// A ListWatch belongs to one informer, whose cache (its Indexer) it is
// given before the informer runs (SetStore). It keeps no record of the
// objects it forwarded: at a million objects, a map entry, a key and a
// resourceVersion per object beside the cache, which holds the same
// objects under the same keys, were a quarter of the heap. A relist
// diffs against the cache instead, and that is exact because of two
// things client-go v0.37's informers guarantee:
//
//   - the informer applies the reflector's events to its cache in the
//     order the reflector received them (RealFIFO: InOrderInformers is
//     GA and locked on), and no handler holds that up (handlers are
//     called on goroutines of their own);
//   - with the AtomicFIFO feature gate (beta, on by default), the cache
//     records the resourceVersion of the last event it applied
//     (LastStoreSyncResourceVersion): an object's on add, update and
//     delete, a list's on the reflector's Replace, a bookmark's.
//
// The cache may lag the reflector, though: an Added handed over but still
// in the informer's queue is not in it yet, and a diff made then would
// never delete that object if the list no longer had it. So a relist
// first waits until the cache's resourceVersion is that of the last event
// the reflector was handed (events that Keep drops are not counted), or
// until its context ends; nothing else reaches the reflector meanwhile,
// for the relist runs on the goroutine that forwards the events. The
// wait is bounded (a minute; the cache applies a million objects in
// seconds): a cache that has not caught up by then was not handed what
// the ListWatch forwarded, and the relist gives way to the reflector's
// own, as below, with ErrStoreBehind, rather than leave the informer
// blind.
//
// If a user turns AtomicFIFO off (KUBE_FEATURE_AtomicFIFO=false), the
// cache does not say what it has applied. A relist is then not attempted:
// the expired watch reaches the reflector as the 410 it is, the reflector
// lists again and replaces its cache itself (exact, but after client-go's
// backoff), and Options.Transient is told ErrNoStoreVersion, which says
// why. The same holds for a ListWatch without a store.
package resume
