package scripting

import (
	"errors"
	"math"
	"time"

	"github.com/dop251/goja"

	"github.com/kreact/kreact/event"
)

// The kreact API for timers: kreact.after(obj, delay), which asks for a
// call of onTimer later (event.Outcome.Timer); package delivery arms it.

// installTimers installs kreact.after, refused in admission handlers
// (queuing).
func (e *env) installTimers(kreact calls) {
	kreact.add("after", e.queuing("after", e.after))
}

// MaxTimerDelay bounds the delay of kreact.after.
const MaxTimerDelay = 366 * 24 * time.Hour

// kreact.after(obj, delay): call onTimer(obj, ctx) with the object's latest
// state once delay has passed. delay is a duration string ("90s", "10m",
// "1h30m"), a number of milliseconds, or a Date to call at. Part of the
// call's transaction; a later kreact.after of the object replaces it.
func (e *env) after(call goja.FunctionCall) goja.Value {
	e.enter("after")
	if e.handler == "" {
		e.throw(errors.New("after: timers can only be requested from a handler"))
	}
	ev := e.ev
	switch {
	case ev == nil || ev.Type == event.Tick || ev.Object == nil:
		e.throwType("after: %s has no object; a timer belongs to the object of the call", e.handler)
	case ev.Type == event.Delete:
		e.throwType("after: the object is deleted; its timers are dropped")
	case !e.cfg.p.HasHandler(event.Timer):
		e.throwType("after: the script declares no onTimer(obj, ctx) to call")
	}
	t := e.target("after", call.Argument(0))
	if t.res.GVR.GroupResource() != ev.Resource.GVR.GroupResource() || t.namespace != ev.Object.GetNamespace() || t.name != ev.Object.GetName() {
		e.throwType("after: %s is not the object of this call (%s); a timer belongs to the object of the call", t.String(), objectRef(ev))
	}
	d := e.delay(call.Argument(1))
	e.timer = &event.TimerRequest{Delay: d, Origin: e.origin()}
	return goja.Undefined()
}

// delay reads the delay of kreact.after.
func (e *env) delay(v goja.Value) time.Duration {
	var d time.Duration
	switch {
	case goja.IsString(v):
		var err error
		if d, err = time.ParseDuration(v.String()); err != nil {
			e.throwType("after: delay %q is not a duration such as \"90s\", \"10m\" or \"1h30m\"", v.String())
		}
	case goja.IsNumber(v):
		ms := v.ToFloat()
		if math.IsNaN(ms) || math.IsInf(ms, 0) {
			e.throwType("after: delay is %v; want milliseconds, a duration string or a Date", ms)
		}
		if ms > float64(MaxTimerDelay/time.Millisecond) {
			d = MaxTimerDelay + 1
		} else {
			d = time.Duration(ms * float64(time.Millisecond))
		}
	default:
		o, ok := v.(*goja.Object)
		at, isTime := time.Time{}, false
		if ok {
			at, isTime = o.Export().(time.Time)
		}
		if !isTime {
			e.throwType("after: want after(obj, delay) with delay in milliseconds, a duration string (\"10m\") or a Date")
		}
		d = at.Sub(e.cfg.host.Now())
	}
	if d > MaxTimerDelay {
		e.throwType("after: delay is longer than %v", MaxTimerDelay)
	}
	return max(d, 0)
}

// objectRef names the object of an event as a target prints it.
func objectRef(ev *event.Event) string {
	t := target{res: ev.Resource, namespace: ev.Object.GetNamespace(), name: ev.Object.GetName()}
	return t.String()
}
