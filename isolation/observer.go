package isolation

import (
	"time"

	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/scripting"
)

// Observer is the engine.Observer under it, which also tells Split of
// every failed call, so that a rule whose calls hog the process moves to
// the isolated one (Split.Misbehaved).
type Observer struct {
	engine.Observer
	Split *Split
}

// HandlerCall reports the call to the Observer under it, then a failed
// one to Split.
func (o Observer) HandlerCall(rule string, event scripting.EventType, d time.Duration, err error) {
	o.Observer.HandlerCall(rule, event, d, err)
	if err != nil {
		o.Split.Misbehaved(rule, err)
	}
}
