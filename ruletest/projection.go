package ruletest

import (
	"fmt"
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// projector plays what the informers of a rule's plan keep of each
// object: it cuts the objects of a case down to their informer's fields
// (delivery.Informer.Fields, with projection.Fields.Apply, as kreact
// run's informers do) before the delivery core sees them, so that the
// core decides on what kreact run would have: an update that changes
// only dropped paths calls nothing. It remembers the whole object of
// each cut one, so that the calls, through caller, see strict views
// (event.Strict) that report the reads of dropped paths.
//
// Cases are strict per rule: a rule sees exactly its own projection,
// although under kreact run the informer it shares with other rules may
// keep more (the union of their fields).
type projector struct {
	rule *rules.Resolved
	plan []delivery.Informer

	mu    sync.Mutex
	whole map[*unstructured.Unstructured]cut
	reads []string // reports of reads outside the projection, each once
}

// cut is where a cut-down object came from.
type cut struct {
	whole  *unstructured.Unstructured
	source int
}

func newProjector(rule *rules.Resolved, plan []delivery.Informer) *projector {
	return &projector{rule: rule, plan: plan, whole: map[*unstructured.Unstructured]cut{}}
}

// project returns obj as plan[source] keeps it.
func (p *projector) project(source int, obj *unstructured.Unstructured) *unstructured.Unstructured {
	f := p.plan[source].Fields
	if obj == nil || f.Whole() {
		return obj
	}
	out := &unstructured.Unstructured{Object: f.Apply(obj.Object)}
	p.mu.Lock()
	p.whole[out] = cut{whole: obj, source: source}
	p.mu.Unlock()
	return out
}

// strict returns the Strict of an event whose objects project cut, or
// nil.
func (p *projector) strict(ev event.Event) *event.Strict {
	p.mu.Lock()
	obj, isCut := p.whole[ev.Object]
	old, oldCut := p.whole[ev.OldObject]
	p.mu.Unlock()
	if !isCut && !oldCut {
		return nil
	}
	source := obj.source
	if !isCut {
		source = old.source
	}
	inf := p.plan[source]
	w := p.rule.Rule.Watch[inf.Entry]
	return &event.Strict{
		Fields:    inf.Fields,
		Object:    obj.whole,
		OldObject: old.whole,
		Where:     fmt.Sprintf("spec.watch[%d].fields", inf.Entry),
		WherePos:  w.FieldsPos,
		Report:    p.report,
	}
}

func (p *projector) report(r event.OutsideRead) {
	s := r.String()
	p.mu.Lock()
	defer p.mu.Unlock()
	if !slices.Contains(p.reads, s) {
		p.reads = append(p.reads, s)
	}
}

// outside returns the reports so far.
func (p *projector) outside() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.reads)
}

// caller is the delivery.Caller of a rule in a test: its runtime, with
// strict views of the objects the projector cut.
type caller struct {
	rt *scripting.Runtime
	p  *projector
}

func (c caller) Invoke(ev event.Event) (event.Outcome, error) {
	ev.Strict = c.p.strict(ev)
	return c.rt.Invoke(ev)
}
