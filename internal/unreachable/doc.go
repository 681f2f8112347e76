// Package unreachable tells the errors of a request to the API server
// that waiting cures: the server could not be reached, or answered that it
// cannot serve now. It is the one classification of them; the informers
// (package internal/resume) and the actions (package actions) both wait
// on exactly these, without using up retries.
//
// It recognises transport failures (a net.Error, a refused or reset
// connection, EOF while the server restarts, a lost HTTP/2 connection, a
// name that does not resolve yet), also when client-go reports them only
// as text, and the statuses 503, 429 and 504 and server timeouts. A
// status that says the request itself is wrong (4xx), or 500, is not
// among them: callers decide about those. Except that the text is read
// for statuses too: an admission webhook that cannot be reached makes
// the API server answer 500 "failed calling webhook …: connect:
// connection refused", and that is an outage to wait out like the API
// server's own, not a reason to use up an action's retries.
package unreachable
