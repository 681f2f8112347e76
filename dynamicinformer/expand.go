package dynamicinformer

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// expand returns the decoded form of a cached object (see compactObject),
// also inside a DeletedFinalStateUnknown; anything else is returned as it
// is.
func expand(obj any) any {
	switch o := obj.(type) {
	case *compactObject:
		return o.decode()
	case cache.DeletedFinalStateUnknown:
		o.Obj = expand(o.Obj)
		return o
	}
	return obj
}

// expander sits between an informer and a Watch's handler: the informer
// caches compact objects, handlers receive them decoded. Each handler
// decodes its own copy, so that no handler can change what another reads.
//
// An update's old state is, most often, the new state of the update
// before it of the same object: at a steady rate a rule's own write
// follows the change it reacted to, before anything else changes. So the
// expander remembers the last object it decoded as an add's or update's
// new state, and gives that same decoded object again as the next
// update's old state when the informer's old object is that one,
// rather than decoding it a second time. Handlers treat objects as
// read-only (as they must an informer's), so seeing it twice changes
// nothing for them.
//
// The informer calls a handler's methods one at a time, from one
// goroutine; deletes sent by a handover may come from another, and leave
// what is remembered alone.
type expander struct {
	h cache.ResourceEventHandler
	// last is the compact object last given to h decoded, as lastDecoded,
	// as an add or as an update's new state.
	last        *compactObject
	lastDecoded *unstructured.Unstructured
}

func newExpander(h cache.ResourceEventHandler) *expander { return &expander{h: h} }

func (x *expander) OnAdd(obj any, initial bool) { x.h.OnAdd(x.decodeNew(obj), initial) }

func (x *expander) OnUpdate(oldObj, newObj any) {
	var old any
	if c, ok := oldObj.(*compactObject); ok && c == x.last {
		old = x.lastDecoded
	} else {
		old = expand(oldObj)
	}
	x.h.OnUpdate(old, x.decodeNew(newObj))
}

func (x *expander) OnDelete(obj any) { x.h.OnDelete(expand(obj)) }

// decodeNew decodes obj, an add's or an update's new state, and
// remembers it.
func (x *expander) decodeNew(obj any) any {
	c, ok := obj.(*compactObject)
	if !ok {
		return expand(obj)
	}
	u := c.decode()
	x.last, x.lastDecoded = c, u
	return u
}

var _ cache.ResourceEventHandler = (*expander)(nil)
