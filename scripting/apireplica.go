package scripting

import "github.com/dop251/goja"

// The kreact API for where a script runs: kreact.replica.

// installReplica installs kreact.replica.
func (e *env) installReplica(kreact calls) {
	kreact.add("replica", e.replica)
}

// kreact.replica(): {name, leader}, the replica the script runs on.
func (e *env) replica(goja.FunctionCall) goja.Value {
	e.enter("replica")
	r := Replica{Leader: true}
	if f := e.cfg.opts.Replica; f != nil {
		r = f()
	}
	o := e.vm.NewObject()
	_ = o.Set("name", r.Name)
	_ = o.Set("leader", r.Leader)
	return o
}
