// Package explain answers "why did my rule act on this object, or not?".
// For each loaded rule it tells whether a spec.watch entry takes the
// object, and if not which namespace or selector leaves it out, where
// that is written and how to fix it (delivery.Watches); then what the
// rule's delivery core recorded about the object (delivery.Core.Trace):
// the decision about each change (queued, coalesced, not handled by
// spec.events, ignored by a spec.ignoreChanges path…), each call with its
// outcome, retries and error, each action with its result, and what
// waits (a call, a timer, the finalizer).
//
// The same code serves `kreact test --explain`, which prints it for the
// objects of a failing case, and `kreact explain`, which asks a running
// kreact for it over HTTP (Handler, Ask; Live is a running kreact's
// answer). That endpoint is off unless
// `kreact run --explain-address` names a loopback address (package
// metrics refuses any other): the answer holds object names, label
// values and script errors, so nothing outside the Pod reaches it
// (kubectl exec or port-forward do), and it only reads. With --shards,
// each replica answers for itself and says which replica's shard holds
// the object; the rules of the isolated rules' process are listed as
// such, unanswered.
//
// A Handler answers from what the process holds, and one GET of the
// object: the traces are bounded (delivery.DefaultTraceSize per rule)
// and scanned, not indexed, so an answer costs microseconds per rule
// whatever the number of objects watched.
package explain
