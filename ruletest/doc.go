// Package ruletest runs kreact rules offline, against test files that say
// which objects exist, what happens to them and which actions the rules
// must ask for in return. It is what `kreact test` runs; docs/testing.md at
// the repository's root documents the test file format for users, and
// schema/ruletest.schema.json (also JSONSchema) describes it for editors.
//
// # Same semantics as kreact run
//
// A rule test is only worth something if passing it says what the rule will
// do in a cluster. So nothing here reimplements the script side: rules are
// loaded and checked by validate.Check, the one check of every command (a
// rule that kreact run would refuse makes the test file invalid, with
// validate's errors), resolved with the restmapper (over
// restmapper.Builtin and the test's CRDs instead of a cluster's
// discovery) and run in scripting.Runtime,
// with a scripting.Host whose checks are those of the engine's host:
// Resolved.Readable and the per-namespace cache restrictions for
// kreact.get and kreact.list, Resolved.Allows and Rule.AllowsHTTP for
// actions, with the same errors.
//
// What the engine gets from informers is played by a fake cache, one map
// of objects keyed by group, resource, namespace and name, which fixtures
// fill and events change. Each event is reported to the informers of each
// rule's plan (delivery.Plan, as kreact run builds them) the way a watch
// would: namespaces and selectors are evaluated locally (field selectors by
// dotted path), and an object that starts or stops matching becomes an add
// or a delete. From there on, everything is kreact run's own code: the
// delivery core (package delivery) decides which handler is called with
// what (spec.events and the script's handlers, coalescing, ignored paths),
// makes the calls transactional and retries failed ones, and reads go
// through delivery.Reader. Objects are cut down to their informer's fields
// (spec.watch[].fields, delivery.Informer.Fields) with the informers' own
// projection.Fields.Apply before the delivery core sees them; the handlers
// see them through strict views (event.Event.Strict), and a read of a
// dropped field that the whole object has fails the case. The clock of a test is a fake one that only
// advance events move (so retries are made at once); the delivery core's
// timers and scheduled ticks run on it, and advance stops at each of their
// deadlines in turn, as a running kreact would meet them. The rules catch
// up after every event, unless the event is marked queued: then the next
// one arrives first, and the two are coalesced as they would be under
// load.
//
// Admission requests (admit events) go through package admission's own
// code: admission.Intercepts selects the rules whose derived webhook
// configurations would send the request, and an admission.Reviewer
// answers it as the server does (the same verdicts, patches, audit mode
// and failure policy), with a host that reads the fake cache under the
// same restriction as kreact run (admission.Readable: spec.reads only).
//
// Actions of successful calls are recorded, not executed; the cache
// changes only through events. This keeps a test a plain sequence that a reader can follow, and
// a rule's reaction to its own action is tested by writing the result as
// the next event.
//
// # Determinism
//
// The clock is fixed (spec.now) but for advance events, kreact.list
// returns objects sorted, rules run in load order and every case starts
// from the fixtures with fresh runtimes. The only source of variation left is a script's own.
//
// # Expectations and output
//
// Expected actions are compared in order, field by field, listing only what
// matters: verb, resource and name always, anything else when written.
// Failures print both lists as YAML with a line diff, the actual actions cut
// down to the compared fields so that the diff shows the mistake and not
// the noise. Run prints a report in the style of go test; with
// Options.Update it rewrites the expectations of failing cases through a
// yaml.v3 Node tree, which keeps the comments and the rest of the file.
//
// # Use
//
// Test files are decoded as rule files are (internal/yamlnode), so both
// report the same mistakes in the same words, and CRD files are read with
// restmapper.ResourcesFromCRDFile, as `kreact validate` reads them.
// LoadFile checks a whole file and reports every problem as a
// diag.ErrorList of file:line:col messages. A File may be run any number
// of times, by one goroutine at a time; each case runs its scripts on the
// runtimes' goroutines and waits for them, and leaves no goroutine behind.
package ruletest
