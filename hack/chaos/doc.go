// Command chaos checks kreact's delivery contract (docs/delivery.md and
// docs/rules.md) under random interleavings of changes and faults, against
// a real control plane.
//
// A run is a seed. The seed picks a sequence of operations (ops.go):
// ConfigMaps and custom resources created, updated (data, labels,
// annotations, spec, status), deleted and created again under the same
// name, ConfigMaps relabelled into and out of the probes' label
// selectors; rule files edited (among them, often and amid the writes,
// the one that switches an informer from the API server's label selector
// to selecting in kreact), or broken and mended; kreact stopped with
// SIGTERM or killed with SIGKILL and started again; the API server
// restarted; with -shards, replicas added, killed and restarted; pauses
// that let timers fall due. The same seed gives the same operations in the
// same order; -duration only says how many of them run.
//
// kreact runs as a separate process with probe rules (probes.go) that use
// every feature at once: spec.finalizer with onDelete, kreact.once,
// kreact.after and onTimer, setCondition, owner references, ignoreChanges,
// spec.watch[].fields, spec.watch[].labelSelector (two rules on one
// informer: p-sel, with delivery every, and p-sel2, whose edits change
// its selector, so that the informer restarts from the server's selector
// to none under p-sel and hands it over), delivery latest and every,
// spec.every and refused permissions. Two probes hold finalizers: p-fin
// on every ConfigMap, and p-sel2 on those its selector selects, so that
// its edits and the checker's relabels take objects out from under its
// finalizer, while it runs and while kreact is away. Each call logs one
// line (rule, handler, object uid, the resourceVersion it saw, the label
// the selectors select on, the finalizers and whether it is being
// deleted) to kreact's log file, which the checker owns: those lines
// survive a SIGKILL. The checker records what it wrote, with the
// resourceVersion the API server gave each write, the finalizers each
// deleted object carried, and when each fault happened (world.go).
//
// When the operations are done, the checker mends every fault, waits for
// kreact to settle, reads the objects' final state and hands the whole
// history to the oracle (oracle.go), which was written from the docs,
// guarantee by guarantee, not from the code (the list of guarantees,
// each with the sentence of the docs it checks, is its guarantees
// table). Among them, for the finalizers: one onDelete per delete the
// finalizer held (p-sel2's only while it still selected the object);
// every deleted object goes; and a finalizer follows its rule's
// selector: every live object carries the finalizer of each probe that
// selects it and of no other, and what p-sel2 let go because it no
// longer selected it got no onDelete. Each violation is printed
// with the seed; then the run is shrunk (shrink.go): operations are
// dropped and the rest run again, on fresh namespaces, for as long as the
// violation still shows, and the shortest sequence found is printed and
// saved, to replay with -replay.
//
// With -from, the run is a rolling upgrade: the replicas start as the
// previous build (a binary, or rev:REV built from git) and are replaced
// by this build one at a time, spread over the run (Upgrade operations),
// and the oracle checks the history as it checks any run
// (TestUpgradeLosesNothing; docs/operations.md#upgrading).
//
// Exit codes: 0 no violation, 1 violations, 2 the run could not be made.
//
//	make chaos SEED=7 DURATION=20m
//	go run ./hack/chaos -seed 7 -duration 20m -shards
//	go run ./hack/chaos -seed 7 -duration 5m -shards -from rev:HEAD~10
package main
