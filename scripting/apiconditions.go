package scripting

import (
	"github.com/dop251/goja"

	"github.com/kreact/kreact/actions"
)

// The kreact API for status conditions: kreact.setCondition, an action
// that sets one condition of an object's status.conditions
// (actions.SetCondition, written by package actions).

// installConditions installs kreact.setCondition, refused in admission
// handlers (queuing).
func (e *env) installConditions(kreact calls) {
	kreact.add("setCondition", e.queuing("setCondition", e.setCondition))
}

// kreact.setCondition(target, {type, status, reason, message,
// observedGeneration}): observedGeneration defaults to the target's
// metadata.generation when the target is an object that has one.
func (e *env) setCondition(call goja.FunctionCall) goja.Value {
	e.enter("setCondition")
	const op = "setCondition"
	t := e.target(op, call.Argument(0))
	o, ok := call.Argument(1).(*goja.Object)
	if !ok {
		e.throwType("%s: want setCondition(target, {type, status, reason, message, observedGeneration})", op)
	}
	c := actions.Condition{
		Type:    e.str(op, o, "type", "condition."),
		Status:  e.str(op, o, "status", "condition."),
		Reason:  e.str(op, o, "reason", "condition."),
		Message: e.str(op, o, "message", "condition."),
	}
	switch g := o.Get("observedGeneration"); {
	case g == nil || goja.IsUndefined(g) || goja.IsNull(g):
		c.ObservedGeneration = e.generation(call.Argument(0))
	case goja.IsNumber(g) && g.ToFloat() == float64(g.ToInteger()):
		c.ObservedGeneration = g.ToInteger()
	default:
		e.throwType("%s: condition.observedGeneration must be an integer", op)
	}
	if err := c.Validate(); err != nil {
		e.throwType("%s: condition %v", op, err)
	}
	a := e.action(actions.SetCondition, &t)
	a.Subresource = actions.ConditionSubresource(t.res)
	a.Condition = &c
	return e.enqueue(op, func() string { return withSub(t.String(), a.Subresource) }, a)
}

// generation is the metadata.generation of an object given as a target,
// or 0.
func (e *env) generation(v goja.Value) int64 {
	o, ok := v.(*goja.Object)
	if !ok {
		return 0
	}
	if m, ok := e.viewMap(o); ok {
		md, _ := m["metadata"].(map[string]any)
		switch g := md["generation"].(type) {
		case int64:
			return g
		case float64:
			return int64(g)
		}
		return 0
	}
	if md, ok := o.Get("metadata").(*goja.Object); ok {
		if g := md.Get("generation"); g != nil && goja.IsNumber(g) {
			return g.ToInteger()
		}
	}
	return 0
}
