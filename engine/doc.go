// Package engine runs reaction rules: it binds each rule's watches to the
// informer manager, hands every change to the rule's script workers, and
// gives the scripts a Host through which they read the cache and enqueue
// actions on the rule's own action queue.
//
// The data flow of one rule:
//
//	informer handler ──► reaction.Delivery (pending state per object, workqueue)
//	                 ──► Workers goroutines, one goja runtime each
//	                 ──► actions.Queue (ActionWorkers, per-object order)
//
// The engine only wires: what reaches which handler, coalescing,
// transactional calls, retries and stopping are package reaction's, and
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
// and an error: a source.ErrorList whose errors name the rule, as in
// `kreact validate`.
package engine
