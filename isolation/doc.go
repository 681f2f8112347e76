// Package isolation runs the rules marked spec.isolate in a kreact
// process of their own, so that what their scripts cost cannot slow the
// other rules.
//
// Within one process, a rule that misbehaves is bounded (its calls are
// demoted, stopped at their memory limit and made to rest; see package
// scripting) but still slows the others: Go's collector is shared, and
// every collection waits for every running call, demoted ones included.
// Measured beside nine hostile rules, a good rule's p99 latency was
// several times what it was alone in the same process, and within the
// noise of the machine with the hostile rules in another process at idle
// priority (see the README's benchmarks).
//
// Guarantees:
//   - Split gives each side its rules: kreact run keeps the rules that are
//     not isolated, and its isolated child keeps only the isolated ones.
//     Both read the same files, with the same loader, and reload them on
//     their own; a rule runs on one side at a time except while an edit
//     that moves it from one side to the other is picked up by one and not
//     yet by the other.
//   - Supervisor starts the child the first time a loaded rule set has an
//     isolated rule, every thread of it at the idle CPU priority (package
//     idleprio), with kreact run's own arguments and ChildEnv set. It
//     restarts a child that exits, with a backoff from 1s to 30s, and
//     logs why. When its context ends it sends the child SIGTERM and waits
//     for it to finish its queued changes and actions, logging progress;
//     if kreact run dies first, the kernel kills the child (Pdeathsig).
//   - With --shards, isolated rules are refused with an error at their
//     rule: a child cannot take part in the shard membership of its
//     parent.
//
// The child serves its own metrics and probes where kreact run's
// --isolated-metrics-bind-address says, and none without it.
//
// Not guaranteed: the parent counts the rules it handed over as loaded
// (HandedOver) whether or not the child could load them, and the child
// runs under the same memory limit (a container's) as its parent, with
// GOMEMLIMIT set from it in each.
package isolation
