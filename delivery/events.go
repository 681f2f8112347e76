package delivery

import (
	"errors"
	"fmt"
	"time"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

// eventEvery is the least time between two Events that spec.recordEvents
// records on one object, so that a rule failing on an object that changes
// all the time does not flood the API server with Events.
const eventEvery = time.Minute

// maxEventMessage bounds an Event's message (the API server refuses
// longer ones than 1 KiB in events.k8s.io; core Events keep the same).
const maxEventMessage = 1024

// maxEventKeys is how many objects the rate limit of Events remembers
// before it forgets those whose last Event is old.
const maxEventKeys = 4096

// The reasons of the Events of spec.recordEvents.
const (
	ReasonGivenUp      = "KreactHandlerGivenUp"
	ReasonActionFailed = "KreactActionFailed"
)

// recordEvent hands the sink a Warning Event about ev's object, if the
// rule has spec.recordEvents and the object had none in the last
// eventEvery. The Event is kreact's, not the script's: it needs no
// permission in spec.permissions.
func (d *Core) recordEvent(key objectKey, ev event.Event, reason, msg string) {
	obj := ev.Object
	if !d.rule.RecordEvents || obj == nil || key.tick {
		return
	}
	now := d.now()
	d.mu.Lock()
	if last, ok := d.events[key]; ok && now.Sub(last) < eventEvery {
		d.mu.Unlock()
		return
	}
	if len(d.events) >= maxEventKeys {
		for k, last := range d.events {
			if now.Sub(last) >= eventEvery {
				delete(d.events, k)
			}
		}
	}
	d.events[key] = now
	d.mu.Unlock()
	if len(msg) > maxEventMessage {
		msg = msg[:maxEventMessage-3] + "..."
	}
	kind, apiVersion := obj.GetKind(), obj.GetAPIVersion()
	if kind == "" {
		kind = ev.Resource.Kind
	}
	if apiVersion == "" {
		apiVersion = ev.Resource.GVR.GroupVersion().String()
	}
	d.sink.EnqueueResult(actions.Action{
		Rule:       d.rule.Name,
		Verb:       actions.Event,
		Resource:   ev.Resource.GVR,
		Kind:       kind,
		APIVersion: apiVersion,
		Namespaced: ev.Resource.Namespaced,
		Namespace:  obj.GetNamespace(),
		Name:       obj.GetName(),
		UID:        obj.GetUID(),
		EventType:  "Warning",
		Reason:     reason,
		Message:    msg,
		Origin:     diag.Position{File: "spec.recordEvents of rule " + d.rule.Name},
	}, func(error) {})
}

// givenUpMessage is the message of the Event of a call given up.
func givenUpMessage(rule string, ev event.Event, retries int, err error) string {
	what := err.Error()
	var se *event.ScriptError
	if errors.As(err, &se) && se.Position.IsValid() {
		what = se.Position.String() + ": " + se.Message
	}
	return fmt.Sprintf("rule %s: %s given up after %d retries: %s", rule, ev.Type.Handler(), retries, what)
}
