// Package delivery is kreact's delivery core (Core): what reaches a rule's
// handlers, when, and what becomes of the actions they ask for. `kreact
// run` (package engine) drives it with informers and an actions.Queue;
// `kreact test` (package ruletest) drives the same code with a fake cache
// and a recorder; `kreact rbac` asks it for the informer plan. The
// semantics below exist here only.
//
// It names what it hands a handler and what it gets back in package
// event's vocabulary (event.Event, event.Outcome, event.ScriptError,
// event.ChangedPaths, the once marker), and runs scripts only through
// its Caller, Server and Handlers interfaces, which a *scripting.Runtime
// and a *scripting.Program satisfy: it does not import package
// scripting, nor the JavaScript runtime.
//
// # Plan
//
// Plan lists the informers a rule needs: one per watched namespace of each
// spec.watch entry (its changes reach the handlers), and an all-namespaces
// one for each spec.reads resource that no selector-free watch covers. A
// watch with spec.watch[].fields keeps only those paths (Informer.Fields)
// and serves no reads, which see whole objects.
// Reader picks the informer that answers a kreact.get or kreact.list.
//
// # Delivery, coalesced per object
//
// A Core holds, per object, the changes its rule has not handled yet,
// and a client-go workqueue of the objects that have some. Informer
// handlers only fold a change into that state and queue the object; they
// never wait for a script. Workers take one object at a time (the
// workqueue never hands one object to two workers), so the calls for one
// object are made in order, while different objects run in parallel.
//
// With spec.delivery "latest" (the default), the changes that wait are
// merged into one call with the latest state:
//
//	add … update          → onAdd(latest)
//	update … update       → onUpdate(object the script last saw, latest)
//	add … delete          → nothing: the script never saw the object
//	… delete              → onDelete(last known state)
//	delete … add          → onDelete(old), then onAdd(new)
//
// ctx.changed of a merged update lists the paths where the latest state
// differs from the object the script last saw (ignored paths left out);
// an update whose net change is empty is not delivered. Pending work is
// bounded by the number of objects, whatever the write rate.
//
// With "every", each change is a call of its own, in order, from a queue
// bounded by rules.MaxQueuedChanges; changes beyond it are dropped, logged
// and counted (Observer.ChangesDropped).
//
// # Transactional, retried calls
//
// A handler call is a transaction (scripting.Runtime.Call): its actions go
// to the Sink only when it returns normally. A call that throws, times
// out, asks for more than spec.maxActions actions or for one the rule may
// not do queues nothing and is retried with exponential backoff, on the
// object's latest state (changes that arrived meanwhile are merged in), up
// to spec.retries times. Then it is given up: logged with rule, handler,
// object and cause, and counted (Observer.HandlerGivenUp). A failure that
// repeats (same line, script position and kind of error: a throw, a
// timeout, the memory or CPU limit; whatever the object and the error's
// text; same error when there is no position) is logged in full once,
// then at most every 10s as one line whose repeated=N counts the
// occurrences it stands for, and once more when the Core stops, so that a
// rule failing on every object does not flood the log and no count is
// lost.
//
// Every failed call is also told to Options.Failures, as it fails and
// before it is retried: a control path (package isolation moves a rule
// whose calls hog the process), where the Observer only counts.
//
// With spec.recordEvents, a call given up, and an action of a successful
// call that fails, also become a
// Warning Event on the call's object (reasons ReasonGivenUp and
// ReasonActionFailed), handed to the Sink like an action: at most one per
// object every minute (eventEvery), so that a rule failing on a busy
// object does not flood the API server. kreact test records them among
// the actions, as it records everything the Sink is handed.
//
// After a failed call, the worker that made it rests ten times the CPU
// time the call used (event.ScriptError.CPU, at most a minute) before
// it takes the next object, so that a rule failing on every object (an
// endless loop stopped by its timeout) uses at most a tenth of a CPU. A
// call stopped for its memory limit after using at least 2ms of CPU rests
// at least 1s per 32 MiB it was charged with
// (event.ScriptError.Allocated), so that a rule failing that way
// makes at most 32 MiB of garbage a second; a call stopped for memory
// after less CPU time rests by its CPU time only. Its objects wait,
// coalescing; nothing is dropped. Drain (offline tests) does not rest.
//
// # Once per object
//
// A call whose kreact.once returned true carries the patch that marks its
// object (event.Outcome.Once). It is sent after every other action of
// the call has succeeded, and not at all if one failed; the object stays
// busy until it is written. Until the informer shows the marker, the next
// calls of the object get it with the marker added, so that kreact.once
// returns true once here. The marker's own change is ignored like
// spec.ignoreChanges. At least once: a stop between the actions and the
// marker leaves the object unmarked.
//
// # Timers and ticks
//
// A call may ask for a timer (kreact.after): onTimer of its object, with
// the object's latest state, once the delay has passed (at least
// MinTimerDelay). A timer is part of the call's transaction: armed only
// when the call returns normally. One timer per object: a later one
// replaces it, earlier or later. The object's delete drops it. onTimer
// calls are ordered with the object's other calls (same workqueue key);
// a failed one is retried like any call. Timers live in memory: a rule
// that starts gets every object as an initial add, where its script
// re-arms them, so nothing is persisted.
//
// spec.every and spec.schedule (a calendar, in its time zone) schedule
// onTick on the same clock; ticks that fall due while one runs, or that a
// clock jump skipped, are merged into one. A failed tick is retried like
// any call, and the schedule goes on whether it succeeds or is given up.
// With Options.Schedules (kreact run --shards), a tick that falls due is
// made only where it says so, unless the rule's spec.tickScope is
// replica: once for the cluster.
// Options.Clock is that clock. The workqueue's AddAfter wakes the object
// when a deadline comes; offline, where the clock moves by steps, Fire
// queues what is due and NextDue says when the next deadline is.
//
// # Stopping
//
// Run stops taking objects when its context ends: the calls under way
// finish (each is bounded by the rule's timeout), queued calls that have
// not started are dropped. That is safe because a rule that starts again
// receives every existing object as an initial add; only the onDelete of
// objects deleted in between is lost, as it is for any restart.
//
// # Trace
//
// With Options.Trace, a Core keeps per object (and informer of the
// plan) its latest decisions, calls and actions, which Core.Trace
// returns, with what waits for the object (a call, a timer, the
// finalizer): `kreact explain` and `kreact test --explain` print it. A
// change is queued, coalesced into the call that waited, not handled
// (spec.events, or no such handler in the script, with the position of
// spec.events), ignored (an update whose every change is under an
// ignored path: each path is named with the spec.ignoreChanges entry
// that swallowed it and its position), cancelled (an add deleted before
// its call), dropped (a full "every" queue, a finalized object) or seen
// (a call already had its state from the cache). A call records its
// handler, time, duration, retry number and outcome (ok, failed with
// the retry to come, given up, with the error at its script position
// and the worker's rest); an action its verb, target, result (ok,
// dry-run, failed with the error: a refusal names the permission) and
// latency. kreact.log lines are not recorded: they go to the log.
//
// Changes that never reach the Core (another namespace, a selector
// that does not match, another replica's shard) leave no record here;
// Watches says which spec.watch entry takes an object, and why not.
//
// The trace is bounded: TraceSize.Objects objects of TraceSize.Records
// records each. A Record is 136 bytes (plus the text of its detail and
// target, when it has some), so DefaultTraceSize (256 × 16) takes about
// 0.56 MB per rule once full; the place of the object seen first is
// reused for a new one, records included, so that tracing allocates
// nothing per change but that text. It costs a mutex, a map look-up and
// the clock's time per record: measured with BenchmarkObserve (an add,
// an update and a call per object), 1.3µs without a trace and 2.7–3.4µs
// with DefaultTraceSize on a shared 2-core machine, next to the tens of
// microseconds of a script call. Without Options.Trace it costs a nil
// check.
//
// # Concurrency
//
// Observe, Tick, Fire, NextDue and the informer handlers may be called
// from any goroutine and never block on scripts. Run calls each Caller from one
// goroutine at a time: a Server (a *scripting.Runtime) runs the worker's
// loop on its own goroutine (Server.Serve), which spares a hand-over
// between goroutines per call and replaces the goroutine of a call stuck
// in built-in code; any other Caller gets a goroutine of Run's. Drain is
// for one goroutine, when nothing else runs the Core (offline tests).
//
// # Where things are
//
// A change's way through a Core, one file a step: observe.go takes it in
// from the informer (Observe) and folds it into its object's entry,
// whose coalescing change.go holds; take.go makes the object's next call
// ready from its entry (take), and puts back one that failed (restore);
// call.go calls the handler (call) and settles the call: commits its
// actions, or retries or gives it up (settle); worker.go is the loop that
// does so (Run, Drain) and the rest after a failed call (RestAfter).
// delivery.go holds the Core and what it is given (Caller, Sink, Cache),
// options.go its Options and the hooks it tells (Observer, Failures).
// Beside that way: timer.go (kreact.after, and the ticks of spec.every
// and spec.schedule), finalize.go (spec.finalizer), once.go
// (kreact.once's marker), events.go (spec.recordEvents), faillog.go (the
// failures' log, rate-limited), trace.go (Trace), fifo.go (the ring
// that holds the workqueue's keys). plan.go (Plan, Reader)
// and watches.go (Watches) read the rule alone, before any Core.
package delivery
