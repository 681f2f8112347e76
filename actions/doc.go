// Package actions carries what rules ask for (create, server-side apply,
// patch, delete, a Kubernetes Event, a status condition, an HTTP request)
// from the script that asked to the API server.
//
// A status condition is merged when it executes, not when the script asks:
// the worker reads the object's conditions from the API server and writes
// them back (MergeCondition) with the resourceVersion it read, so that a
// change made since the script's cached copy is neither lost nor
// overwritten (a conflict is retried on a new read), and nothing is
// written when the condition already reads as asked.
//
// Each rule gets its own Queue, so a rule whose actions fail, or that is
// rate limited, never delays another rule. A Queue is a client-go typed
// rate-limiting workqueue keyed by the target object; the actions for one
// object wait in a FIFO beside the queue. The workqueue never hands one key
// to two workers at once, so the actions on one object run one at a time, in
// the order the rule asked for them, while different objects proceed in
// parallel and in no particular order. The queue's workers are started as
// actions wait, up to Options.Workers, and stop when none waits, one
// always left waiting: a rule with nothing to do holds one goroutine for
// its actions rather than Workers, and an action is taken at once whenever
// fewer than Workers run.
//
// Failures are classified:
//   - the API server is unreachable or overloaded (connection errors,
//     timeouts, 429, 503; internal/unreachable, the classification the
//     informers wait on too): the action waits, with a backoff capped at one
//     second so that it goes out soon after the server is back, and is
//     retried for as long as the queue runs (outcome Waiting); this does not
//     count against the retry limit, so an API server that goes away loses
//     no queued action; the log says so at most every 10 s per rule;
//   - the target of an HTTP action (a webhook) refuses the connection, does
//     not answer within the HTTP client's timeout, or answers 5xx, 429 or
//     408: logged as "webhook unreachable" or "webhook failing" with its
//     URL, retried with backoff up to the rule's retry limit (outcome
//     Retrying), then logged again and counted as given up (GaveUp, as for
//     any failure that outlived its retries). A webhook is not the API
//     server: it may stay down for good, and waiting for it without limit
//     would hold every later request to it;
//   - a failure worth retrying (conflict, internal error): retried with
//     backoff up to the rule's retry limit, then logged with its cause and
//     counted as given up;
//   - a request the server refuses for good (forbidden, invalid, bad
//     request, and any other 4xx from a webhook): logged with the verb and
//     resource (or URL) and counted as failed at once;
//   - creating what already exists and deleting what is already gone count
//     as done: actions are idempotent, since two leaders may briefly overlap.
//
// A queue's client may impersonate a user (a team's Rule acts as a
// ServiceAccount of its namespace; package engine): Options.ActingAs then
// names it in the error of every API request, so that a refused action
// says whose rights refused it.
//
// Dry-run sends the same requests with dryRun=All, so the API server still
// validates them, and logs what would have happened; HTTP requests are only
// logged.
package actions
