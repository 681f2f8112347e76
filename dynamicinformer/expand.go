package dynamicinformer

import (
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
type expander struct{ h cache.ResourceEventHandler }

func (x expander) OnAdd(obj any, initial bool) { x.h.OnAdd(expand(obj), initial) }
func (x expander) OnUpdate(oldObj, newObj any) { x.h.OnUpdate(expand(oldObj), expand(newObj)) }
func (x expander) OnDelete(obj any)            { x.h.OnDelete(expand(obj)) }

var _ cache.ResourceEventHandler = expander{}
