// Package dynamicinformer runs kreact's informers: one client-go dynamic
// informer per resource, namespace, field selector and sharding (a Key
// but for its label selector), shared by every rule that watches it,
// started when the resource is served and stopped when it is not, or when
// the last rule lets go.
//
// # Why not client-go's DynamicSharedInformerFactory
//
// The factory shares informers per GVR, but it cannot stop one GVR
// (kubernetes#79610): it stops all or nothing. An informer that has stopped
// cannot be run again. And an informer left running for a CRD that was
// deleted retries its list forever, logging a 404 every few seconds. kreact
// watches whatever resources its rules name, including CRDs that come and
// go, so it manages informers itself, as kro (pkg/watch) and
// controller-runtime (pkg/cache/internal) do:
//
//   - Each informer runs under its own context, so it can be stopped
//     alone. Its field selector goes to the server, and so does its label
//     selector when all its Watches have the same one; when they differ,
//     it lists and watches every object once and each Watch selects its
//     objects in Go (selects, on the labels every projection keeps),
//     before its handler is called: fifty rules with fifty label
//     selectors on a resource cost one watch and one cache, and a
//     script is called only for the objects its selector selects, with
//     the API server's meaning (see Manager.WatchFields). A resource that disappears and comes back gets
//     a new informer; the same Watch handles carry on, and their handlers
//     receive the objects of the new informer's initial list as adds.
//   - Informers are started only for resources in the discovery snapshot
//     (discovery.Source). A Watch on a resource that is not served is
//     PhasePending, logged once, and starts by itself when discovery adds
//     it. When discovery drops it, or the server answers 404, the informer
//     is stopped with one log line and its watches go back to pending: no
//     404 loop. The informers' watch-error handler routes other failures
//     to slog at Warn, at most once per Options.RetryPeriod per informer;
//     client-go's own contextual logs go to the same slog handler (klog
//     V(n) as slog level -n).
//   - Before an informer starts, a preflight lists one object and opens a
//     watch with the key's namespace and selectors. A 403 makes the watch
//     PhaseForbidden with a *ForbiddenError naming the verb, resource and
//     namespace; a 400 (say, an unsupported field selector) makes it
//     PhaseFailed. Neither starts an informer that would fail forever, and
//     neither affects other keys. Both are retried every RetryPeriod, so
//     granting the permission later heals the watch; a 403 met by a running
//     informer (permission revoked) stops it and does the same.
//   - At most Options.MaxConcurrentInitialLists informers are starting
//     (preflight and initial list) at once, so a rule set naming hundreds
//     of resources does not hit the API server with hundreds of lists.
//   - Outages cost no change and little time (see package
//     internal/resume, the list-watch of every kreact informer): the
//     reflector is never told about a failure that waiting cures, so
//     client-go's backoff (up to a minute after a few failures, not
//     configurable through SharedIndexInformer) never applies to an API
//     server that restarts. Lists and watches that cannot reach the
//     server are retried within a second; a broken watch resumes from the
//     last resourceVersion it delivered; an expired one lists and delivers
//     the difference from the informer's cache, deletes included.
//   - Objects are shaped for the cache as they are read, a list page at
//     a time: stripForCache drops managedFields and the
//     last-applied-configuration annotation, the projection of the
//     informer's watches drops the fields none of them reads (see
//     WatchFields), and what is left is kept in a compact form, one
//     string per object (compactObject), about a third of the decoded
//     maps' memory. With Options.REST (every kreact process has it), the
//     JSON of lists and watch events is transcoded into that form in one
//     pass, stripped as it is read (transcoder): about a ninth of the CPU
//     of client-go's decoding into maps (BenchmarkWatchDecoding), which
//     was the largest part of kreact's whole path. Handlers, Get and List
//     receive objects decoded from the compact form (see the package
//     benchmarks for what that saves).
//
// # Guarantees
//
//   - A handler's methods are called in the order the informer saw the
//     changes, never two at a time (from one goroutine per Watch, but for
//     the deletes a handover sends when its informer restarts), also across
//     a resource's disappearance and return (the old informer's handler
//     goroutine has returned before the new informer starts).
//   - A Watch joining a running informer first receives every cached object
//     as OnAdd(obj, true); Watch.HasSynced (the registration's, not the
//     informer's) says when this handler has caught up.
//   - Objects given to handlers and returned by Get and List are decoded
//     for each handler and call: their maps are the receiver's own, their
//     strings share the cache's memory. One exception: an update's old
//     object is the very object the same handler was given as the new
//     state of its previous add or update, when that was of the same
//     state (see expander), which spares a decode per update of a rule's
//     own write; handlers must not change what they are given. Each decode costs about 1.5 µs
//     for a 1 KiB ConfigMap (BenchmarkCompact), a fifth of decoding its
//     JSON.
//   - When a resource goes away no deletes are synthesised for the objects
//     of the stopped informer: a resource may leave discovery while its
//     objects live on (a CRD version no longer served, an aggregated API
//     that is down), and a fake delete could set off a destructive rule.
//     A deleted CRD's objects are deleted before the CRD goes, and those
//     deletes are usually delivered, but not when the informer was
//     re-establishing its watch at that moment. When the resource comes
//     back, the new informer's initial list is the truth.
//   - A Watch joining an informer whose label selector went to the server,
//     with another selector, restarts it without one; its other Watches
//     are handed over (see handover) and lose and repeat nothing: the
//     new informer's initial list gives them what changed meanwhile (as
//     a relist does: an object's states in between reach them as one
//     change, to its state then; an object created meanwhile as an add
//     that is not initial), and the deletes they missed (objects
//     deleted, or relabelled out of their selector, while the informers
//     were switched). This costs a
//     map entry per object and Watch of an informer that selects on the
//     server.
//   - A sharded informer (Key.Sharded) restarts on every change of the
//     replica's range. Its handlers are handed over (see handover): from
//     the new informer's initial list they receive the objects they were
//     not given before as initial adds, those that changed since as
//     updates, and nothing for those they were given in the same state.
//     A membership change re-runs rules only on the objects that moved.
//     This costs a map entry per object and sharded Watch.
//   - After Watch.Stop returns, its handler is not running and will not be
//     called again; after Manager.Run returns, no handler is.
//
// # Who may call what
//
// Every method of Manager and Watch is safe for concurrent use. Manager.Run
// is called once. Watch.Stop waits for the handler, so it must not be
// called from inside that handler (it would deadlock); Manager.Watch and
// the cache reads may be called from handlers. Handlers must return
// quickly: they delay only their own Watch, but a stuck handler blocks
// Watch.Stop and the restart of its informer.
package dynamicinformer
