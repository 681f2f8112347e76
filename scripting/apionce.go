package scripting

import (
	"errors"
	"fmt"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
)

// The kreact API for doing something once per object: kreact.once(obj).
// The marker it writes is package event's (event.OnceAnnotation).

// installOnce installs kreact.once, refused in admission handlers
// (queuing).
func (e *env) installOnce(kreact calls) {
	kreact.add("once", e.queuing("once", e.onceCall))
}

// onceCall is kreact.once(obj): true when the call's object does not
// carry the rule's once marker yet; the call's transaction then marks it,
// after all its other actions have succeeded (event.Outcome.Once).
func (e *env) onceCall(call goja.FunctionCall) goja.Value {
	e.enter("once")
	if e.handler == "" {
		e.throw(errors.New("once: only a handler can ask for it"))
	}
	ev := e.ev
	switch {
	case ev == nil || ev.Type == event.Tick || ev.Object == nil:
		e.throwType("once: %s has no object; once marks the object of the call", e.handler)
	case ev.Type == event.Delete:
		e.throwType("once: the object is deleted; there is nothing left to mark")
	}
	t := e.target("once", call.Argument(0))
	if t.res.GVR.GroupResource() != ev.Resource.GVR.GroupResource() || t.namespace != ev.Object.GetNamespace() || t.name != ev.Object.GetName() {
		e.throwType("once: %s is not the object of this call (%s); once marks the object of the call", t.String(), objectRef(ev))
	}
	if event.Marked(ev.Object, e.cfg.opts.Rule) {
		return e.vm.ToValue(false)
	}
	if e.once == nil {
		uid := ev.Object.GetUID()
		a := e.action(actions.Patch, &t)
		a.UID = uid
		a.PatchType = types.MergePatchType
		a.PatchData = event.OncePatch(uid, e.cfg.opts.Rule, e.cfg.host.Now())
		if err := e.cfg.host.Permit(a); err != nil {
			e.throw(fmt.Errorf("once: its marker is a patch of %s: %w", t.String(), err))
		}
		e.once = &a
	}
	return e.vm.ToValue(true)
}

// OnceCalls returns where the script calls kreact.once, in source order,
// as written (kreact.once(...)): what `kreact validate` checks against the
// rule's permissions, since each call patches the object of its handler.
func (p *Program) OnceCalls() []diag.Position { return p.onces }

// onceCalls finds the OnceCalls of a parsed script.
func (p *Program) onceCalls(tree *ast.Program) []diag.Position {
	var out []diag.Position
	inspect(tree, func(n any) {
		call, ok := n.(*ast.CallExpression)
		if !ok {
			return
		}
		dot, ok := call.Callee.(*ast.DotExpression)
		if !ok || dot.Identifier.Name.String() != "once" {
			return
		}
		if id, ok := dot.Left.(*ast.Identifier); ok && id.Name.String() == "kreact" {
			out = append(out, p.position(tree.File.Position(int(id.Idx)-tree.File.Base())))
		}
	})
	return out
}
