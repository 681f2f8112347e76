// Package finalizers is kreact's handling of the finalizer a rule with
// spec.finalizer puts on the objects it watches, kreact.dev/RULE, so that
// the rule's onDelete runs even for an object deleted while kreact was
// away: the API server keeps the object, with a deletionTimestamp, until
// kreact has called onDelete and removed its finalizer.
//
// The patches here are JSON patches guarded by tests, never merge patches
// of the whole list (which would drop another controller's finalizer added
// meanwhile): adding appends to the list (or creates it, guarded by the
// object's resourceVersion), removing tests that the entry at the index is
// still ours. A test that fails makes the API server refuse the patch, and
// the removal is made again from the object's newer state: Remove holds
// that loop, for Release (which reads the newer state from the API
// server) and for package delivery (from its informer's cache).
//
// Package delivery decides when to add and remove (it is the one place
// that knows when onDelete has succeeded); Release removes a rule's
// finalizers from every object, for a rule that is removed or turns the
// option off (package engine; every object of the rule's namespaces,
// whatever its selectors), ReleaseStrays those the running version of
// the rule does not select, at every start of the rule (objects whose labels left
// the selector while kreact was away, or that an edit no longer selects),
// and Release serves `kreact finalizers release`, the
// escape when kreact itself is gone: the command finds the resources a
// rule watches in its files (rules.Find), and Targets turns resource names
// into what Release scans, every object of each resource whatever the
// rule's selectors, and Run releases them and writes what it did. After a
// release, WaitBack (Back, every half second) finds the objects that a
// kreact still running the rule gave the finalizer again, and NotCarried,
// when no object had the rule's finalizer, names the kreact finalizers
// the objects do carry (Carried).
package finalizers
