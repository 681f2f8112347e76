package actions

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"github.com/kreact/kreact/apiresource"
)

// ConditionSubresource returns the subresource through which a
// SetCondition action reads and writes the conditions of r's objects:
// "status" where r has a status subresource, else "", the object itself.
// It is the one place that decides it: the script sets
// Action.Subresource with it, rules check and RBAC grants the permission
// it implies.
func ConditionSubresource(r apiresource.Resource) string {
	if r.HasSubresource("status") {
		return "status"
	}
	return ""
}

// Condition is a status condition that a SetCondition action sets, the
// fields of metav1.Condition that a rule chooses (lastTransitionTime is
// kreact's).
type Condition struct {
	// Type names the condition ("Ready"); required.
	Type string
	// Status is "True", "False" or "Unknown".
	Status string
	// Reason is a short CamelCase reason; Message says it for people.
	// Empty leaves them out.
	Reason, Message string
	// ObservedGeneration is the metadata.generation the condition was set
	// for; zero leaves it out.
	ObservedGeneration int64
}

// conditionStatuses are the statuses a condition may have.
var conditionStatuses = []string{"True", "False", "Unknown"}

// Validate returns an error naming the field when c cannot be a
// condition: it has no type, or a status other than True, False or
// Unknown, or a negative observedGeneration.
func (c Condition) Validate() error {
	switch {
	case c.Type == "":
		return errors.New("type is required")
	case !slices.Contains(conditionStatuses, c.Status):
		return fmt.Errorf("status must be \"True\", \"False\" or \"Unknown\", not %q", c.Status)
	case c.ObservedGeneration < 0:
		return fmt.Errorf("observedGeneration must not be negative, got %d", c.ObservedGeneration)
	}
	return nil
}

// MergeCondition returns conditions, the status.conditions of an object
// as decoded JSON (nil when it has none), with c set the way Kubernetes
// controllers set a condition (apimachinery's meta.SetStatusCondition):
// the condition of c's type is replaced, or added at the end; the others
// are kept as they are, in their order; lastTransitionTime becomes now
// when the condition is new or its status changes, and is kept otherwise;
// reason, message and observedGeneration are c's (removed when c leaves
// them empty), and fields of the condition that kreact does not set are
// kept.
// changed is false, and conditions returned as they are, when the
// condition already reads as c: nothing needs to be written.
//
// It returns an error when conditions is not a list of objects. It does
// not modify conditions.
func MergeCondition(conditions any, c Condition, now time.Time) (merged []any, changed bool, err error) {
	var list []any
	switch x := conditions.(type) {
	case nil:
	case []any:
		list = x
	default:
		return nil, false, fmt.Errorf("status.conditions is a %T, not a list", conditions)
	}
	at := -1
	for i, item := range list {
		m, ok := item.(map[string]any)
		if !ok {
			return nil, false, fmt.Errorf("status.conditions[%d] is a %T, not an object", i, item)
		}
		if m["type"] == c.Type {
			at = i
			break
		}
	}
	// Fields kreact does not set (a Node's lastHeartbeatTime, a Pod's
	// lastProbeTime) are kept.
	var old map[string]any
	next := map[string]any{}
	if at >= 0 {
		old = list[at].(map[string]any)
		for k, v := range old {
			next[k] = v
		}
	}
	next["type"], next["status"] = c.Type, c.Status
	set := func(key string, v any, ok bool) {
		if ok {
			next[key] = v
		} else {
			delete(next, key)
		}
	}
	set("reason", c.Reason, c.Reason != "")
	set("message", c.Message, c.Message != "")
	set("observedGeneration", c.ObservedGeneration, c.ObservedGeneration != 0)
	if t, ok := old["lastTransitionTime"].(string); !ok || t == "" || old["status"] != c.Status {
		next["lastTransitionTime"] = now.UTC().Format(time.RFC3339)
	}
	if at < 0 {
		return append(slices.Clone(list), next), true, nil
	}
	if sameCondition(old, next) {
		return list, false, nil
	}
	merged = slices.Clone(list)
	merged[at] = next
	return merged, true, nil
}

// MergeConditionInObject is MergeCondition for conditions written with
// the object itself (a resource without a status subresource, see
// ConditionSubresource), whose metadata.generation, as read, is
// generation. The API server counts every change of such an object
// outside metadata as a new generation, so writing the condition moves
// the generation on by one, to an object that differs from the one read
// only by the condition. A condition asked for the generation read is
// therefore written with the generation its write produces
// (generation+1): the next call sees that generation, asks for it, and
// finds the condition as asked, where recording the generation read would
// leave the condition one behind for ever and make every call write
// again. A condition that already reads as c, or as c with generation+1,
// needs no write; the latter keeps a server that would not move the
// generation from being written to again and again.
func MergeConditionInObject(conditions any, c Condition, generation int64, now time.Time) (merged []any, changed bool, err error) {
	merged, changed, err = MergeCondition(conditions, c, now)
	if err != nil || !changed || c.ObservedGeneration == 0 || c.ObservedGeneration != generation {
		return merged, changed, err
	}
	c.ObservedGeneration = generation + 1
	return MergeCondition(conditions, c, now)
}

// sameCondition reports whether a condition as stored (old, decoded JSON,
// whose numbers may be int64 or float64) reads as next.
func sameCondition(old, next map[string]any) bool {
	if len(old) != len(next) {
		return false
	}
	for k, v := range next {
		o, ok := old[k]
		if !ok {
			return false
		}
		if n, ok := v.(int64); ok && k == "observedGeneration" {
			if !sameNumber(o, n) {
				return false
			}
			continue
		}
		if !reflect.DeepEqual(o, v) {
			return false
		}
	}
	return true
}

func sameNumber(v any, n int64) bool {
	switch x := v.(type) {
	case int64:
		return x == n
	case float64:
		return x == float64(n)
	case int:
		return int64(x) == n
	}
	return false
}
