// Package engine runs reaction rules: it binds each rule's watches to the
// informer manager, hands every change to the rule's script workers, and
// gives the scripts a Host through which they read the cache and enqueue
// actions on the rule's own action queue.
//
// The data flow of one rule:
//
//	informer handler ──► delivery.Core (pending state per object, workqueue)
//	                 ──► Workers goroutines, one goja runtime each
//	                 ──► actions.Queue (ActionWorkers, per-object order)
//
// The engine only wires: what reaches which handler, coalescing,
// transactional calls, retries and stopping are package delivery's, and
// are the same under `kreact test`. Informer handlers only fold changes in;
// they never wait for scripts.
//
// Rules are independent: a rule whose script throws or loops is reported
// (rule, file:line:col, stack) and the other rules and other objects carry
// on. Loading a new rule set replaces only the rules that changed; a set
// that does not validate is refused as a whole and the running rules stay.
// A rule whose resources do not exist yet (a CRD not installed) waits, and
// starts when discovery reports them; but a name close to a served one, in
// a served group or with none, is a typo (restmapper.NotFoundError.Misspelt)
// and an error: a diag.ErrorList whose errors name the rule, as in
// `kreact validate`. CheckRule is the one check of a rule, which Load
// and every command make (package validate, for validate, webhooks, rbac,
// test, record and kreact run's reading of its files), so that none
// accepts a rule that another refuses, and all say the same: the script
// compiles and its handlers fit the rule (scripting.CheckScript), its
// resources resolve, it may patch what kreact.once marks (CheckOnce),
// its admission handlers can be sent what they watch (admission.Check).
// CheckReads compares what the handlers visibly read with the rule's
// spec.watch[].fields: validate shows its warnings, and the engine logs
// them when it starts the rule.
//
// Concurrency: everything that starts or stops rules (Load, a waiting
// rule starting when its resources appear, a rule moving to the version
// discovery serves, Run's final stop) is serialised, so overlapping Load
// calls run one after the other. Preparing a rule (compiling it, building
// its runtimes, which runs the script's top level) and stopping one
// (draining its queues) happen outside the lock that Status, Finalizing
// and ActionStats take; only the swap of the running set is under it, so
// /readyz never waits behind a script. Warm's watches are released by the
// next Load (the rules it starts hold their own on the same informers) or
// when Warm's context ends.
//
// # Whom a rule acts as
//
// An administrator's rule (a rule file, a ClusterRule) acts as kreact
// itself. A team's Rule (rules.Rule.Namespace set) acts as a
// ServiceAccount of its namespace (Identity: the one it names, or
// kreact run's default; never kreact itself): its action queue's client
// impersonates it for every write the rule makes, actions, finalizers,
// kreact.once marks and recorded Events alike, so that the namespace's
// RBAC bounds it and a refused write names the ServiceAccount. The
// informers are shared and read with kreact's own identity; and
// releasing the finalizers of a removed rule is kreact's own cleanup,
// made as kreact so that no object is left undeletable.
//
// When a rule starts (Load, or a waiting rule whose resources appear),
// the engine asks the API server, with a SelfSubjectAccessReview sent as
// the rule's identity, whether it may do each thing the rule needs
// (rbac.Needs: what kreact rbac would grant it), and keeps what it may
// not in Status.Missing, logged on one line per rule. A missing write is
// reported, not refused (RBAC granted later works without a reload);
// but a team's Rule whose ServiceAccount may not read what the rule
// watches or reads is refused, since kreact's informers would otherwise
// read it for the team, and so is one whose permissions cannot be
// checked.
//
// # Rule files and reloads
//
// RuleSet is the rule set of kreact run as a lifecycle component: the
// first load (of RuleFiles, which a Reader reads: ReadRules, or kreact
// run's, which checks every rule as validate does and hands on the rules
// without errors), the wait for the caches, and Reload, which keeps the
// running rules in step with their files: it polls the files' names,
// sizes and modification times (Fingerprint) and, when any changes (an
// edit, a new file, a removed one), reads them again and hands the rules
// to Load, which replaces only the rules that changed and keeps the
// previous version of the rules of the files with problems. Each problem
// is logged on a line of its own; a reload logs again only the problems of
// the files that changed, and counts the others.
//
// Polling rather than inotify: it works the same on every file system,
// including a ConfigMap mounted into a pod (updated by a symlink swap),
// and costs one stat per file per interval.
package engine
