package delivery

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
)

// resolve parses a rule whose spec is spec (with a script added) and
// resolves it against the built-in resources.
func resolve(t *testing.T, spec string) *rules.Resolved {
	t.Helper()
	doc := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n" + spec + "  script: \"function onAdd() {}\"\n"
	rs, err := rules.Parse("r.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs[0].Resolve(restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// describePlan prints a plan one informer a line: key, handled or not,
// readable or not, fields.
func describePlan(plan []Informer) string {
	var b strings.Builder
	for _, inf := range plan {
		fmt.Fprintf(&b, "%s ns=%q handled=%v readable=%v fields=%q\n",
			inf.Key.GVR.GroupResource(), inf.Key.Namespace, inf.Handled, inf.Readable, inf.Fields.String())
	}
	return b.String()
}

func TestPlanFields(t *testing.T) {
	for _, c := range []struct {
		name, spec string
		opts       PlanOptions
		want       string
	}{{
		name: "whole objects without fields",
		spec: "  watch: [{resource: deployments}]\n",
		want: `deployments.apps ns="" handled=true readable=true fields="*"` + "\n",
	}, {
		name: "a projected watch serves no reads",
		spec: "  watch: [{resource: deployments, fields: [spec.replicas]}]\n",
		want: `deployments.apps ns="" handled=true readable=false fields="spec.replicas"` + "\n",
	}, {
		name: "identity only",
		spec: "  watch: [{resource: deployments, fields: []}]\n",
		want: `deployments.apps ns="" handled=true readable=false fields=""` + "\n",
	}, {
		name: "read too: the watch keeps whole objects and serves the reads",
		spec: "  watch: [{resource: deployments, fields: [spec.replicas]}]\n  reads: [deployments]\n",
		want: `deployments.apps ns="" handled=true readable=true fields="*"` + "\n",
	}, {
		name: "read too, watch in a namespace: a whole reads informer beside it",
		spec: "  watch: [{resource: deployments, namespaces: [a], fields: [spec.replicas]}]\n  reads: [deployments]\n",
		want: `deployments.apps ns="a" handled=true readable=false fields="spec.replicas"` + "\n" +
			`deployments.apps ns="" handled=false readable=true fields="*"` + "\n",
	}, {
		name: "read too, sharded: the watch stays projected",
		spec: "  watch: [{resource: deployments, fields: [spec.replicas]}]\n  reads: [deployments]\n",
		opts: PlanOptions{Sharded: true, ShardByNamespace: true},
		want: `deployments.apps ns="" handled=true readable=false fields="spec.replicas"` + "\n" +
			`deployments.apps ns="" handled=false readable=true fields="*"` + "\n",
	}} {
		t.Run(c.name, func(t *testing.T) {
			if got := describePlan(PlanWith(resolve(t, c.spec), c.opts)); got != c.want {
				t.Errorf("plan:\n%swant:\n%s", got, c.want)
			}
		})
	}
}

// TestPlanOfAnAdmissionOnlyRule: a rule whose script has admission
// handlers only gets no informer for its spec.watch entries (the API
// server sends it the changes), and keeps those of its spec.reads; a
// timer or tick handler or spec.finalizer keeps the watch.
func TestPlanOfAnAdmissionOnlyRule(t *testing.T) {
	const watchAndRead = "  watch: [{resource: deployments, namespaces: [a]}]\n  reads: [configmaps]\n"
	const watch = `deployments.apps ns="a" handled=true readable=true fields="*"` + "\n"
	const read = `configmaps ns="" handled=false readable=true fields="*"` + "\n"
	for _, c := range []struct {
		name, spec string
		handlers   Handlers
		want       string
	}{
		{"admission only", watchAndRead, handlerSet{event.Validate, event.Mutate}, read},
		{"admission and onAdd", watchAndRead, handlerSet{event.Validate, event.Add}, watch + read},
		{"onUpdate, which spec.events does not list", "  events: [add]\n" + watchAndRead, handlerSet{event.Update}, read},
		{"onTimer", watchAndRead, handlerSet{event.Timer}, watch + read},
		{"onTick, which may read the watched objects", "  every: 1m\n" + watchAndRead, handlerSet{event.Tick}, watch + read},
		{"spec.finalizer", "  finalizer: true\n" + watchAndRead, handlerSet{event.Validate}, watch + read},
		{"handlers unknown", watchAndRead, nil, watch + read},
		{"the reads informer the watch would have been", "  watch: [{resource: deployments}]\n  reads: [deployments]\n", handlerSet{event.Validate},
			`deployments.apps ns="" handled=false readable=true fields="*"` + "\n"},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := describePlan(PlanWith(resolve(t, c.spec), PlanOptions{Handlers: c.handlers})); got != c.want {
				t.Errorf("plan:\n%swant:\n%s", got, c.want)
			}
		})
	}
}

func TestReaderRefusesProjectedWatch(t *testing.T) {
	res := resolve(t, "  watch: [{resource: deployments, fields: [spec.replicas]}]\n")
	_, err := Reader(res, Plan(res), res.Watch[0].Resource.GVR, "")
	if err == nil || !strings.Contains(err.Error(), "add it to spec.reads (watches with selectors, fields or other namespaces") {
		t.Errorf("Reader = %v, want an error that says to add deployments to spec.reads", err)
	}
}
