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
// spec.every and refused permissions. Each call logs one line (rule,
// handler, object uid, the resourceVersion it saw, and the label the
// selectors select on) to kreact's log file, which the checker owns:
// those lines survive a SIGKILL. The checker records what it wrote, with
// the resourceVersion the API server gave each write, and when each fault
// happened (world.go).
//
// When the operations are done, the checker mends every fault, waits for
// kreact to settle, reads the objects' final state and hands the whole
// history to the oracle (oracle.go), which was written from the docs,
// guarantee by guarantee, not from the code. Each violation is printed
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
