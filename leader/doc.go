// Package leader runs a function only while this replica holds a
// coordination.k8s.io Lease, with client-go's leaderelection underneath.
//
// What it adds to client-go: the function stops the moment the renew
// deadline passes without a renewal (not once client-go has given up and
// tried to release the lease), the lease is released only after the
// function has returned (so a standby never acts while this replica still
// does), and a lost lease is an error, ErrLostLease, that the caller must
// treat as the end of the process: its caches and queues belong to a term
// that has ended, and a restart rejoins the election cleanly. Run returns
// only once every goroutine it started has stopped.
package leader
