// Package validate checks rule files without running them: every file
// parses, every script compiles, its handlers fit the rule's spec.events,
// spec.every and spec.schedule, every resource it names resolves with the
// verbs it declares, and what its admission handlers watch can be sent
// them.
//
// Check reads rule objects in the files too (a ClusterRule, a namespaced
// Rule, a List of them: package rules), and CheckObject checks one rule
// object, as the API server holds it, with the same checks: what kreact's
// admission server refuses at apply (package admission).
//
// Check is the one check of rule files that every command makes: `kreact
// validate`, `webhooks` and `rbac`, `kreact test` (of the rules under
// test), `kreact record`, and `kreact run` at its start and at each reload
// (with Options.WaitForResources, as it waits for a CRD not installed
// yet). Its checks of each rule are the engine's own (engine.CheckRule):
// what validate accepts, `kreact run` runs, and every command reports the
// same list of errors, in the same words. Validate shows the warnings
// too, which the others have no use for, such as a top-level function whose name is a handler's, misspelt,
// and those of engine.CheckReads: a path a handler reads that the rule's
// spec.watch[].fields do not keep; and those of engine.CheckIgnored: a
// rule that calls onUpdate only whose spec.ignoreChanges swallows every
// change it can see, or every path onUpdate reads. Against a cluster,
// Result.CheckCluster adds warnings about what makes a rule silent there:
// a watched namespace that does not exist, a selector that matches no
// object.
//
// Every problem is reported at once, as one sorted diag.ErrorList of
// errors and warnings (diag.Error.Warning), not the first only. Rules
// are checked further even when other rules or files have problems, and
// the scripts of rules with problems of format are checked too
// (rules.LoadAll). Check is safe for concurrent use; it reads files and
// nothing else.
// NewMapper builds the resolver Check takes from a set of resources (a
// cluster's: Discover) and CRD files; Result.Summary is validate's last
// line, after its problems (Result.WriteProblems).
//
// The commands take Check in the shape they need, here rather than in
// cmd/kreact, so that they keep taking it the same way: Reader is kreact
// run's reader of its rule files, at start and at each reload, which
// asks discovery again before it calls an unknown resource a typo;
// ObjectChecker is the admission server's check of rule objects at
// apply; CheckValid refuses, for rbac and webhooks, what validate
// refuses; CheckRunnable gives record and preview the rules that run.
package validate
