// Package scripting runs the JavaScript of kreact's reaction rules in goja.
//
// A rule script declares top-level handlers, each optional:
//
//	function onAdd(obj, ctx) { ... }
//	function onUpdate(oldObj, newObj, ctx) { ... }
//	function onDelete(obj, ctx) { ... }
//	function onTick(ctx) { ... }       // periodic, without an object
//	function onTimer(obj, ctx) { ... } // kreact.after(obj, delay) is due
//	function onValidate(req, ctx) { ... } // admission: allow, or deny with a message
//	function onMutate(req, ctx) { ... }   // admission: the changes to make
//
// and reaches the cluster only through the kreact global (kreact.get,
// kreact.patch, kreact.apply, ...), which validates what the script asks for
// and hands actions.Action values to a Host. kreact.d.ts in this directory
// declares the whole script API for editors and tsc. A script is not a
// module, but `export` in front of a top-level declaration is ignored, so
// that tsc checks each rule file on its own (see exports.go).
//
// The API is installed area by area, each from a file of its own that
// holds the area's functions and the names it gives them (apireads.go:
// get, list; apiactions.go: create, apply, patch, jsonPatch, delete,
// event; apiconditions.go, apiowner.go, apionce.go, apitimers.go,
// apihttp.go, apivalues.go, apiclock.go, apireplica.go, apilog.go);
// api.go's install calls them in turn after setting up the sandbox
// (sandbox.go).
//
// This package is the JavaScript API and the runtimes that run it, and
// nothing else: what a call is handed and what it returns (event.Event,
// event.Outcome, event.ScriptError), which paths of an object changed and
// the once marker are package event's, so that the packages that only
// name them (delivery, metrics, record, isolation) need not import goja.
// A rule's script, compiled where the rule's file places it and checked
// against the rule (rule.go: CompileRule, CheckScript), is here too rather
// than in package rules, which is the format alone and runs no script.
// What governs script calls process-wide (the watchdog of their memory
// and CPU limits, the priority of their threads, GOMAXPROCS, the pacing
// of the collector) is package internal/governor's, whose doc states what
// it guarantees; see Memory below.
//
// # Compile once, one runtime per goroutine
//
// Compile parses and compiles a script once into an immutable Program;
// CompileRule compiles a rule's once per version of the rule, whichever
// of validate, the engine, the admission server or rbac asks first, and
// hands the others the same Program (rules.Rule.Compiled keeps it). A
// goja.Runtime is single-threaded, so every worker goroutine builds its own
// Runtime with NewRuntime, which runs the shared Program's top level once
// and looks the handlers up once; Runtime.Call then costs a function call
// into an already warm runtime. A handler the script does not declare costs
// nothing: Call returns before touching goja. Nor does an argument that a
// handler never reads (ctx, often): Compile finds the parameters whose
// names the handler's text never spells, and a runtime whose handler has
// that very text (a handler replaced at top level does not) hands it
// undefined in their place rather than building a view (params.go).
//
// Positions matter because users read them: syntax errors (a
// diag.ErrorList), exception stacks and the Origin of every action are
// diag.Positions in the rule's own file, printed "file:line:col", even
// when the script sits indented inside YAML (CompileOptions places it).
//
// # Transactions
//
// Runtime.Invoke returns a call's whole transaction (event.Outcome): the actions
// it asked for, the timer of its last kreact.after and the marker patch of
// its kreact.once, which the caller (package delivery) queues and arms
// only for a call that returned normally, the marker after the actions. Runtime.Call is Invoke for callers that only want the actions.
//
// # Admission handlers
//
// onValidate and onMutate decide on an admission request (event.Event.Admission)
// while the API server waits, before anything is stored. A call returns
// its decision in event.Outcome.Verdict: onValidate returns nothing or true to
// allow, a message to deny; onMutate returns nothing, a JSON merge patch
// or JSON patch operations, which package admission turns into the
// response's patch. They have no side effects (their webhook says
// sideEffects: None, and the API server may call them for a dry run or
// refuse the change afterwards), so every kreact function that queues an
// action or a timer throws when they call it, before looking at its
// arguments. The timeout, memory limit and sandbox are those of every
// call; a failed call is the caller's to answer by the rule's failure
// policy.
//
// # Read-only views
//
// Objects come from informer caches, which must never be modified. Wrapping
// a map with Runtime.ToValue would give the script a live, writable window
// into the cache, and copying every object before every call would cost more
// than the call. Handlers, kreact.get and kreact.list therefore see read-only
// views (goja DynamicObject and DynamicArray) that convert fields lazily,
// when the script reads them. Any write or delete throws a TypeError;
// kreact.clone returns a plain, writable copy. Everything a script hands
// back (patches, objects, request bodies) is converted by this package
// rather than by goja's Export, so that NaN, functions, undefined, cycles
// and other non-JSON values fail with a TypeError naming the path, at the
// script line that passed them.
//
// Objects cut down to a rule's spec.watch[].fields have undefined where
// the projection dropped a field. event.Event.Strict (kreact test) shows them
// through strict views, which also report each read of a dropped field
// that the whole object has; Program.ReadPaths lists the reads a
// handler's code shows, for validate to compare with the fields.
//
// # Timeouts and interrupts
//
// Every call, and the top level when a runtime is built, has a deadline
// (RuntimeOptions.Timeout), and optionally a CPU limit
// (RuntimeOptions.CPULimit, read by the watchdog of package
// internal/governor, below). goja checks Runtime.Interrupt only between
// instructions, never inside built-in functions, so:
//
//   - ClearInterrupt runs before every call: an Interrupt that arrived
//     after the previous call ended must not stop the next one.
//   - A call that was interrupted may have left the script's global state
//     half updated: the next Call rebuilds the goja runtime from the
//     Program.
//   - Backtracking regular expressions have a match timeout
//     (RegexpMatchTimeout, set through regexp2.DefaultMatchTimeout, the
//     package's one process-wide effect of its own; the others are the
//     governor's: see Memory).
//   - Some built-ins take super-linear time on hostile input (JSON.stringify
//     of a value nested 200,000 deep takes minutes: its cycle check is
//     quadratic) and cannot be interrupted. So each Runtime runs the script
//     on a goroutine of its own, and Call waits for it at most Timeout plus
//     a grace period; after that it abandons the call: that goroutine
//     finishes on its own time, with a discarded goja runtime that can no
//     longer queue actions, and a new goroutine serves the next call. Call
//     refuses to run while two abandoned calls are still running. The
//     caller is never held longer than Timeout plus the grace period. The
//     goroutine is long-lived rather than one per call: a fresh goroutine
//     would regrow its stack for goja's deep call chains on every call, and
//     measured about 50% more CPU per call. A caller that makes calls in a
//     loop (kreact's delivery workers) hands the loop itself to that
//     goroutine (Runtime.Serve), so that a call costs no hand-over between
//     goroutines: the runtime's goroutine takes the change, calls and acts
//     on the result. A call stuck past the grace period is then abandoned
//     the same way, its result is settled on Serve's goroutine, and a new
//     goroutine carries the loop on.
//
// Deep recursion ends in a stack overflow error (MaxCallStackSize), not in a
// crash.
//
// # Memory
//
// goja has no allocation hook and Go has no per-goroutine allocation
// counter, so a call's memory limit (RuntimeOptions.MemoryLimit) is kept
// with two measures, none exact:
//
//   - Built-ins that build a value much larger than their arguments in one
//     step are wrapped (capAllocations): they estimate the result from the
//     lengths they are given and throw a RangeError when it is over the
//     limit, before allocating. This matters because Interrupt cannot
//     stop a built-in that runs, and an abandoned call keeps allocating.
//     Typed arrays, ArrayBuffer and DataView are removed outright.
//     Compiling a regular expression is one such step (a pattern of a
//     million characters, or x{1000} a thousand times, takes over 200
//     MB): the RegExp constructor, RegExp.prototype.compile, and match,
//     matchAll and search given a string estimate it from the pattern
//     (regexpSize) and refuse it likewise, and refuse a pattern whose
//     groups nest deeper than MaxRegexpNesting with a SyntaxError.
//     Compile refuses such a literal, at its position, against
//     DefaultMemoryLimit: goja compiles literals with the script.
//   - What a script takes step by step is the process-wide governor's
//     (package internal/governor, whose doc states what it guarantees):
//     each Runtime registers its calls with it through a governor.Meter,
//     and each call runs locked to its thread. Its watchdog charges a
//     call with the pages its own thread takes first (Linux counts them
//     per thread), and with what the whole process allocated since the
//     call started once the call took an eighth of its limit, and 4 MiB,
//     itself; it reads them every 5ms and interrupts a call over its
//     limit, which fails with event.ScriptError.Memory set, its runtime rebuilt
//     as after a timeout, and the memory it held handed back to the
//     operating system (governor.Reclaim). What other calls, the
//     informers or the rest of the process allocate is not the call's: a
//     loop that allocates nothing is never stopped for memory, however
//     much is allocated beside it.
//
// The governor also keeps spinning scripts from starving the rest of the
// process: it demotes the thread of a call that has used 2ms of CPU to
// SCHED_IDLE (the thread ends with the call, and a new goroutine serves
// the next one), raises GOMAXPROCS by the calls running, and spaces out
// Go's collections while calls misbehave. A failed call reports the CPU
// time it used (event.ScriptError.CPU), by which package delivery makes the
// rule's worker rest, and event.ScriptError.Hogged says whether it computed at
// length.
//
// What this cannot remove is that one process's rules share its collector:
// beside hostile calls, a good rule's calls still wait for collections
// that wait for the hostile ones. Rules that must not slow the others run
// in a process of their own (package isolation, spec.isolate).
//
// Guaranteed: what the governor guarantees (a call that takes memory step
// by step is stopped at the first reading after it passes its limit; a
// call whose thread took less than an eighth of its limit is never
// stopped for memory, whatever the rest of the process allocates), and
// the wrapped built-ins never allocate more than the limit in one step.
// Not guaranteed: punctual readings (see the governor). A call that is
// interrupted while stuck in a built-in is abandoned (see Timeouts) and
// finishes on its own, unwatched.
// Built-ins outside the wrapped list, or the originals reached by a
// script written to evade the wrappers, can allocate past the limit in
// one step. The process's resident set is therefore bounded only loosely:
// measured with the hostile scripts of the engine's memory e2e test on a
// loaded two-core machine, it peaked 197–289 MiB above idle in fifteen runs (engine's
// TestHostileRulesStayWithinMemoryBound; before package delivery rested
// memory-stopped calls by their garbage, 225–348 MiB in 29 of 31 runs
// and 470 and 772 MiB in two; 120–580 MiB before the pacer; 0.55–1.5 GiB
// before failing rules rested; 460 and 551 MiB under the race detector
// once calls were charged with their own page faults, 526 MiB for the
// build before on the same day); an earlier build reached 3.6 GiB once
// when calls got stuck.
// Values handed to the host are capped in size and nesting separately.
//
// # Sandbox
//
// goja has no require, file system or network access. eval and every
// Function constructor throw: code built from strings at run time would
// escape the checks below. goja's and esbuild's parsers recurse, and a Go
// stack overflow is fatal, so Compile refuses sources over MaxSourceSize or
// nested deeper than MaxNesting before parsing (a linear scan), and
// JSON.parse refuses text nested deeper than MaxJSONNesting. Source maps are
// disabled both in Compile and for eval, so a sourceMappingURL comment
// cannot make the process read a file. Date.now() and new Date() use the
// Host's clock, so rules can be tested offline with a fixed time.
//
// # Concurrency
//
// Compile and a Program's methods are safe for concurrent use. A Runtime
// is not: one goroutine at a time may call it, and Close it when done (a
// Runtime that is garbage collected stops its goroutine too). Host
// methods are called from the Runtime's goroutine, one at a time per
// Runtime; a Host shared by several Runtimes must be safe for concurrent
// use. Objects handed in through an event.Event or returned by the Host
// are never modified and not kept after Call returns, unless the script
// stores them in its global state (where they stay read-only).
package scripting
