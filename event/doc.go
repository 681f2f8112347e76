// Package event is the vocabulary that the delivery core and the
// JavaScript runtime speak to each other: what a rule's handler is called
// with (Event, its Type, an admission handler's AdmissionRequest, the
// Strict views of kreact test), what a call that returned normally asked
// for (Outcome: its actions, its TimerRequest, its once marker, an
// admission handler's Verdict), and how a call fails (ScriptError,
// Hogged, ErrStuck, ErrAbandoned, ErrClosed). With it are the two pieces
// of meaning both sides must agree on: which paths of an object changed
// (ChangedPaths, ctx.changed of a handler), and the annotation that marks
// an object done for a rule's kreact.once (OnceAnnotation, Marked).
//
// It sits below both package delivery, which decides when a handler runs
// and what becomes of its outcome, and package scripting, which runs the
// handler in goja; so that delivery, metrics, record and isolation can
// name an event, an outcome or a failure without importing the
// JavaScript runtime. It holds data and pure functions only: it imports
// no script engine, starts no goroutine and keeps no state.
//
// Guaranteed:
//
//   - Every function here is safe for concurrent use and modifies none
//     of its arguments; ChangedPaths and Marked only read the objects
//     they are given, which usually come from an informer cache.
//   - ChangedPaths never reports metadata.resourceVersion,
//     metadata.managedFields or metadata.generation (which the API server
//     moves only with another change, reported or ignored for itself),
//     nor anything equal to or under an ignored prefix; a map that one
//     side lacks compares as an empty map when an ignored path lies below
//     it, so that writing kreact.once's marker on an object with no
//     annotations is no change. Its paths are written as a script writes
//     them (AppendKey).
//   - The Types are listed in the order of their handlers, and
//     Type.Index is a Type's place in that list, stable for arrays of
//     NumTypes.
package event
