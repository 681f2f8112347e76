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
//     lists, and forwards the difference between the list and what it told
//     the reflector before (adds, updates, and deletes with the last known
//     state), then a bookmark at the list's resourceVersion. The reflector
//     sees one long watch, and its informer sees every change, deletes
//     included.
//   - Lists are made in pages of PageSize, at the newest resourceVersion
//     (the API server serves them from its watch cache), and handed to the
//     reflector as one list: the response of an unpaginated list, held
//     whole beside the objects decoded from it, was the largest transient
//     allocation of a sync and set the heap's size for good.
//   - With Options.Shape, each object is replaced, as soon as it is
//     decoded, by what the informer caches (package dynamicinformer keeps
//     a cut-down, compact form): a list's decoded objects are let go page
//     by page, and what the ListWatch remembers of each object is the
//     shaped form the cache holds too, not a second copy.
//   - Errors that waiting does not cure (403, 404, a bad selector) reach the
//     reflector as before, and from it the informer's watch-error handler.
//   - Streaming lists (WatchList) are turned off: the watch resumes plain
//     watches only. That also keeps the reflector away from the one sleep
//     of client-go v0.37's reflector that ignores its stop channel (the
//     backoff after a refused connection in Reflector.watchList), so an
//     informer on a ListWatch stops as soon as its context ends, whatever
//     its watch is doing: every wait here ends with the context too.
//
// A ListWatch belongs to one informer: it remembers what it told that
// informer's reflector.
package resume
