// Package record turns what kreact's rules did with live objects into a
// `kreact test` case (package ruletest): the objects' changes, in order,
// with the time between them, and the actions the rules asked for. It is
// what `kreact record` writes; docs/cli.md documents the command. It also
// shows what rules would do to the cluster's objects now, without doing
// it (Preview, `kreact preview`; see Preview below).
//
// # Design: the rules run here, in dry-run, and the recorder listens
//
// A faithful replay needs the actions of exactly the changes recorded,
// made by the code that makes them under kreact run. So `kreact record`
// runs the rules itself with package engine, in dry-run (every action is
// sent with dryRun=All: the cluster does not change), and a Recorder
// takes two streams:
//
//   - the changes of the objects chosen (resource, names, namespace,
//     label selector), from an informer of its own on the same informer
//     manager (Recorder.Watch), in the order the watch delivers them;
//   - the actions, as each rule's delivery core hands them to its action
//     queue (engine.Options.Asked): the point where package ruletest's
//     recorder takes them offline, so both sides record the same thing.
//
// Observing a separate running kreact instead would need its actions back
// from the API server (a dry-run leaves none, and events and HTTP calls
// leave no object change), and would not know which rule asked.
//
// # The case
//
// Recording.Case writes one RuleTest case: objects already there when the
// recording starts are adds with initial: true (kreact run delivers its
// initial list so, ctx.initial), then every add, update and delete, with
// an advance event for the time since the previous one (to the
// millisecond), and one for the time from the last change to the end of
// the recording, so that timers (kreact.after) and spec.every or
// spec.schedule ticks fall due in the replay as they did live. spec.now is
// the time the rules started.
//
// Objects are trimmed of what the test format ignores and a script has no
// use for: metadata.managedFields and metadata.resourceVersion (kreact
// test delivers no update for a change of those alone, and an update that
// changed nothing else is not recorded). uid, creationTimestamp and
// generation stay: scripts read them (kreact.once's marker patch names the
// uid, TTL rules read creationTimestamp, setCondition observedGeneration).
//
// Expected actions are written as `kreact test --update` writes them
// (ruletest.ActionFields), the rule's name included when several rules
// run, without the dryRun that record's own dry-run sets (a rule's own
// spec.dryRun is kept). The errors of calls given up (the Recorder is the
// engine's Observer) are the case's expected errors, without their
// position, whose file name differs between the command line and the
// case's spec.rules.
//
// # The rules see what is recorded
//
// Run is the whole recording: the Recorder's watches, then the engine's
// on Recorder.Scope, which filters the informers the engine watches
// through: a change of an object of a recorded resource that the
// recording leaves out (another namespace, label or name) does not reach
// the rules, so that the case holds every change of that resource they
// acted on.
//
// # Limits of the replay
//
// The replay is exact when the rules see only the changes recorded: a
// rule that also watches or reads resources not recorded acts on changes
// the case does not hold (kreact record runs the case it wrote, and says
// so). Live, changes that arrive together may be
// coalesced into one call (kreact run's delivery); the case replays each
// change after the previous one's calls. Scripts that write the clock
// into an action (kreact.now(), Date, kreact.once) read the time of the
// call live, and the time recorded for the change, to the millisecond,
// offline: such a case does not replay, and Write says so (ReplayHint). With several
// rules, the order of their actions for one change is the order they
// were asked in live, where the rules run side by side, and offline in
// load order.
//
// # Preview
//
// Preview runs rules the way Run does, in dry-run with package engine
// and a Recorder taking the actions they ask for, so that a preview and
// a recording, and kreact run, share one delivery, one permission check
// and one conversion of script calls into actions. It hands the rules the
// objects they watch (narrowed by ScopeAll, kreact preview's -n and -l),
// waits until every rule's watches have delivered their initial list and
// no call waits and every action asked for has its final result, then
// stops the engine, which lets the calls under way finish and drains
// their actions. So a Plan is the actions of the initial adds: what kreact
// run would do at start, not what it would do later (reactions to its own
// writes, timers, ticks that fall due after the preview).
//
// Each action's diff is from its target as the API server holds it when
// the preview ends to the API server's answer to the action's dry run,
// kept by the transport of the engine's client (capture): the server's
// own merge of a server-side apply, its defaults and its mutating
// webhooks, which no local computation matches. Each action's diff is
// against the object as it is, not after the actions before it.
//
// A preview of an edit runs the running version's rules, then the new
// version's, one engine after the other on the same started informers;
// Compare tells their actions apart, object by object, along the longest
// common sequence of each object's actions. WritePreview prints the one
// Plan or the Comparison of two, and says whether the rules would act
// (otherwise), for kreact preview --exit-code.
package record
