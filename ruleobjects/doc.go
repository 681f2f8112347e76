// Package ruleobjects runs the rules that live in the cluster as objects:
// Rule (a team's, in its namespace) and ClusterRule (an administrator's,
// as a rule file is). It watches both kinds through the informer layer,
// as kreact watches any resource, turns each object into a rule with the
// checks of a rule file (rules.ParseObject), hands the rules to the
// engine with the same semantics as a reload of rule files, and writes
// each object's status.
//
// What it guarantees:
//   - Loaded live, as files are. A new or edited object is loaded within
//     Options.Debounce of its change reaching the watch (changes that come
//     together are loaded together). An edit that does not parse or check
//     leaves the last good version of the rule running, and says so in the
//     status. Deleting an object stops its rule, which releases what the
//     rule holds (its finalizers on objects, its timers), as removing a
//     rule from a file does.
//   - One set of names. The rules of objects and of files are loaded as
//     one set (engine.Combined); a ClusterRule named as a file's rule does
//     not run, and its status says where the other is. A Rule's name is
//     NAMESPACE.NAME and cannot collide.
//   - Status says whether the rule runs and why not: the Ready condition
//     (with observedGeneration), every problem with its field and, for a
//     script, its line:col within spec.script, and the counts (calls,
//     failures, actions, given up) with the last error. A status is
//     written when what it says changes, and when only its counts changed
//     at most once per Options.Refresh; all writes share one rate limit
//     (Options.WritesPerSecond), so a thousand rules cost the API server
//     a bounded number of writes, never one per call.
//   - Without the CRDs installed, nothing is loaded and the watch waits
//     for them (logged once by the informer layer); rule files keep
//     working.
//
// What it does not: the counts are those of the process that writes the
// status, so the calls of a rule that runs in the isolated rules' process
// (spec.isolate) are not counted there (its Ready says where it runs); and the status of a rule whose
// object kreact cannot patch (RBAC) is logged, not written.
package ruleobjects
