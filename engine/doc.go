// Package engine runs reaction rules: it binds each rule's watches to the
// informer manager, hands every change to the rule's script workers, and
// gives the scripts a Host through which they read the cache and enqueue
// actions on the rule's own action queue.
//
// The data flow of one rule:
//
//	informer handler ──► worker FIFO (by object) ──► goja runtime ──► actions.Queue
//
// Informer handlers only enqueue. Each rule has Workers script workers, each
// with its own goja runtime running the rule's one compiled Program; a
// change goes to the worker chosen by its object's namespace and name, so
// the changes of one object reach the script in order while different
// objects run in parallel. Worker FIFOs are unbounded: a slow script delays
// its own rule but loses no event.
//
// Rules are independent: a rule whose script throws or loops is reported
// (rule, file:line:col, stack) and the other rules and other objects carry
// on. Loading a new rule set replaces only the rules that changed; a set
// that does not validate is refused as a whole and the running rules stay.
// A rule whose resources do not exist yet (a CRD not installed) waits, and
// starts when discovery reports them.
package engine
