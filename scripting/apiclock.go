package scripting

import (
	"github.com/dop251/goja"
)

// The kreact API for time: kreact.now, the Host's clock, which Date.now()
// and new Date() use too (install sets goja's time source). Timers are
// apitimers.go's.

// installClock installs kreact.now.
func (e *env) installClock(kreact calls) {
	kreact.add("now", e.now)
}

// kreact.now(): the host's clock as a Date.
func (e *env) now(goja.FunctionCall) goja.Value {
	e.enter("now")
	d, err := e.vm.New(e.date, e.vm.ToValue(e.cfg.host.Now().UnixMilli()))
	if err != nil {
		panic(err)
	}
	return d
}
