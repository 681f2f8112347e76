// Package isolation runs the rules marked spec.isolate, and the rules
// whose calls hogged kreact run, in a kreact process of their own, so that
// what their scripts cost cannot slow the other rules.
//
// Within one process, a rule that misbehaves is bounded (its calls are
// demoted and stopped at their memory limit, see package
// internal/governor, and its workers made to rest, see package delivery)
// but still slows the others: Go's collector is shared, and every
// collection waits for every running call, demoted ones included.
// Measured beside nine hostile rules, a good rule's p99 latency was
// several times what it was alone in the same process, and within the
// noise of the machine with the hostile rules in another process at idle
// priority (see docs/performance.md).
//
// Each kreact run process reads its Role from its environment (RoleOf:
// the child, started with Command, or not), reads its rule files as its
// role has it (Role.ReadRules: the parent logs their problems, the child
// leaves them to it), and builds one Isolation
// (New): it holds the Split and, in kreact run, the Supervisor; it gives
// the engine its options (CPULimit, RunsElsewhere, and itself as its
// Failures, which delivery tells of every failed call) and the
// rule set its loader and the count of the other side, and is the
// lifecycle.Runnable of the reloads that follow a move and of the child,
// so that nothing it starts outlives its Start.
//
// New also connects the Split and the Supervisor, through interfaces that
// each declares for what it needs of the other: the Split asks for the
// child (Child) and tells it the rules it moves (MovedTo); the Supervisor
// gives the moved rules back when the child cannot start (MovedFrom).
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
//     restarts a child that fails, with a backoff from 1s to 30s, and
//     logs why.
//   - The child reports to its parent on a pipe (Reporter, ReportFDEnv):
//     after each of its loads, how many rules it runs, which the parent
//     counts as its own (Supervisor.Running, for engine.RuleSet); and,
//     before it exits because none of its rules can run, why. Such a
//     child is started again only at the next Want (the parent loaded the
//     rule files again, or a rule moved), and if it was the first, the
//     parent's start fails as it would if those rules had been its own
//     (Supervisor.Heard). When its context ends it sends the child SIGTERM and waits
//     for it to finish its queued changes and actions, logging progress;
//     if kreact run dies first, the kernel kills the child (Pdeathsig).
//   - A rule that the parent runs moves to the child when one of its
//     calls hogs the parent (event.Hogged: stopped at MoveAfterCPU,
//     the parent's engine.Options.CPULimit, or at its timeout or memory
//     limit while computing), if Split.MovedTo is set (kreact run
//     --isolate-misbehaving). The parent logs the move and stops the rule;
//     the Supervisor tells the child every move so far, on the child's
//     standard input, at each start and at each move (Listen reads them
//     before the child's first load); the child starts the rule. A move
//     holds for that version of the rule (rules.Rule.Fingerprint): an
//     edit runs in the parent again, on both sides alike. Moves are kept
//     for the life of the parent. If the child cannot be started at all
//     (Supervisor.MovedFrom), the parent takes the moved rules back
//     (Split.TakeBack), moves no more, and ends the CPU limit, so that a
//     rule runs here rather than nowhere.
//   - A rule that leaves one side for the other keeps its finalizers on
//     the objects (Split.RunsElsewhere, engine.Options.RunsElsewhere);
//     only a rule removed for good, or that turned spec.finalizer off,
//     has them released.
//   - With --shards, isolated rules are refused with an error at their
//     rule, and no rule moves: a child cannot take part in the shard
//     membership of its parent.
//
// The child serves its own metrics and probes where kreact run's
// --isolated-metrics-bind-address says, and none without it.
//
// Not guaranteed: the calls that made a rule move ran in the parent, as
// did every call the rule started before the move; moving bounds what a
// rule costs the others, it does not remove it. The parent's count of the
// child's rules is what the child last reported, so it lags an edit until
// the child has reloaded too. The child runs under the same memory limit
// (a container's) as its parent, with GOMEMLIMIT set from it in each.
package isolation
