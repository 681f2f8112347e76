package dynamicinformer

import (
	"fmt"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Phase is where a watch is in its life.
type Phase int

const (
	// PhasePending: the resource is not served by the API server (not in
	// discovery, or answered 404). The watch starts by itself when it
	// appears.
	PhasePending Phase = iota
	// PhaseStarting: the resource is served and the informer is being
	// started (waiting for a start slot, preflight, initial list), or for a
	// Watch, its handler has not yet received the whole initial list.
	// State.Err holds the last transient error, if any.
	PhaseStarting
	// PhaseSynced: the initial list has been delivered (for a Watch: to its
	// handler) and changes are flowing.
	PhaseSynced
	// PhaseForbidden: the credentials may not list or watch the resource.
	// State.Err is a *ForbiddenError. Retried every Options.RetryPeriod.
	PhaseForbidden
	// PhaseFailed: the server rejected the request as asked (for example an
	// unsupported field selector, or a namespace on a cluster-scoped
	// resource). Retried every Options.RetryPeriod and on discovery changes.
	PhaseFailed
	// PhaseStopped: Watch.Stop was called, or Manager.Run has returned.
	PhaseStopped
)

// String returns the lower-case name of the phase.
func (p Phase) String() string {
	switch p {
	case PhasePending:
		return "pending"
	case PhaseStarting:
		return "starting"
	case PhaseSynced:
		return "synced"
	case PhaseForbidden:
		return "forbidden"
	case PhaseFailed:
		return "failed"
	case PhaseStopped:
		return "stopped"
	}
	return fmt.Sprintf("Phase(%d)", int(p))
}

// State is a watch's phase and, where the phase has one, the error behind it.
type State struct {
	Phase Phase
	// Err explains PhaseForbidden and PhaseFailed; in PhaseStarting it is the
	// last transient error (nil if none); otherwise nil.
	Err error
}

// String returns "phase" or "phase: error".
func (s State) String() string {
	if s.Err == nil {
		return s.Phase.String()
	}
	return s.Phase.String() + ": " + s.Err.Error()
}

// ForbiddenError says which verb on which resource the credentials lack.
// It unwraps to the API server's error, so apierrors.IsForbidden holds.
type ForbiddenError struct {
	// Verb is "list" or "watch".
	Verb string
	// Resource is the group and resource, e.g. "deployments.apps".
	Resource schema.GroupResource
	// Namespace is the namespace asked for; "" means all namespaces (or a
	// cluster-scoped resource).
	Namespace string
	// Scope is the human-readable scope: ` in namespace "x"`, " in all
	// namespaces" or "" for cluster-scoped resources.
	Scope string
	// Err is the API server's answer.
	Err error
}

// Error returns e.g. `forbidden: cannot list configmaps in namespace "x": ...`.
func (e *ForbiddenError) Error() string {
	return fmt.Sprintf("forbidden: cannot %s %s%s: %v", e.Verb, e.Resource, e.Scope, e.Err)
}

// Unwrap returns the API server's error.
func (e *ForbiddenError) Unwrap() error { return e.Err }
