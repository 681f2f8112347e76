package dynamicinformer

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/cache"
)

// updateRecorder keeps the objects of the updates it is given.
type updateRecorder struct {
	cache.ResourceEventHandlerFuncs
	olds, news []*unstructured.Unstructured
}

func (r *updateRecorder) OnUpdate(oldObj, newObj any) {
	r.olds = append(r.olds, oldObj.(*unstructured.Unstructured))
	r.news = append(r.news, newObj.(*unstructured.Unstructured))
}

// An update's old state is decoded again only when it is not the object
// the handler was last given as a new state: a rule's own write following
// the change it reacted to decodes one object, not two. Either way the
// handler receives the objects' contents.
func TestExpanderGivesTheLastNewStateAgainAsOld(t *testing.T) {
	version := func(name, seq string) *compactObject {
		u := sampleObject(t, name)
		u.Object["data"].(map[string]any)["seq"] = seq
		return compact(u)
	}
	a1, a2, a3 := version("a", "1"), version("a", "2"), version("a", "3")
	b1, b2 := version("b", "1"), version("b", "2")
	rec := &updateRecorder{}
	x := newExpander(rec)
	x.OnAdd(a1, true)
	x.OnUpdate(b1, b2) // b1 was never given: decoded
	x.OnUpdate(a1, a2) // b2 came in between: decoded
	x.OnUpdate(a2, a3) // the state just given
	x.OnDelete(b2)     // leaves what is remembered alone
	x.OnUpdate(a3, a1)

	wantOld := []*compactObject{b1, a1, a2, a3}
	wantNew := []*compactObject{b2, a2, a3, a1}
	for i := range wantOld {
		if got, want := rec.olds[i].Object, wantOld[i].decode().Object; !reflect.DeepEqual(got, want) {
			t.Errorf("update %d: old %v, want %v", i, got, want)
		}
		if got, want := rec.news[i].Object, wantNew[i].decode().Object; !reflect.DeepEqual(got, want) {
			t.Errorf("update %d: new %v, want %v", i, got, want)
		}
	}
	for i, shared := range []bool{false, false, true, true} {
		if got := i > 0 && rec.olds[i] == rec.news[i-1]; got != shared {
			t.Errorf("update %d: old is the previous update's new object: %v, want %v", i, got, shared)
		}
	}
}

// BenchmarkExpanderUpdates is what the informers' side of a reaction of
// hack/bench's rule decodes: a write's update of one object (its old
// state last seen long ago), then the update of the rule's own patch of
// it; each op another of a thousand objects.
func BenchmarkExpanderUpdates(b *testing.B) {
	objs := make([][3]*compactObject, 1000)
	for i := range objs {
		for j := range objs[i] {
			u := sampleObject(b, "cm")
			u.Object["data"].(map[string]any)["seq"] = string(rune('0' + j))
			objs[i][j] = compact(u)
		}
	}
	x := newExpander(cache.ResourceEventHandlerFuncs{})
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		o := objs[i%len(objs)]
		x.OnUpdate(o[0], o[1])
		x.OnUpdate(o[1], o[2])
		i++
	}
}
