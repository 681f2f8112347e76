package explain

import (
	"bytes"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/restmapper"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// An admission-only rule watches no change (delivery.NeedsWatch): its
// answer says so, rather than that it has no record of the object.
func TestAdmissionOnlyRuleSaysItWatchesNoChange(t *testing.T) {
	rs, err := rules.Parse("rules.yaml", []byte(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: guard}
spec:
  watch: [{resource: configmaps}]
  timeout: 300ms
  script: "function onValidate(req, ctx) {}"
`))
	if err != nil {
		t.Fatal(err)
	}
	res, err := rs[0].Resolve(restmapper.New(restmapper.NewStatic(restmapper.Builtin()), restmapper.Options{}))
	if err != nil {
		t.Fatal(err)
	}
	prog, err := scripting.CompileRule(rs[0])
	if err != nil {
		t.Fatal(err)
	}
	d := delivery.New(rs[0], prog, nil, delivery.Options{Trace: delivery.DefaultTraceSize})
	defer d.ShutDown()
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"namespace": "shop", "name": "web"}}}
	r := ForRule(res, d, schema.GroupResource{Resource: "configmaps"}, "shop", "web", obj)
	if !r.Watched || !strings.Contains(r.Note, "admission handlers only") {
		t.Errorf("answer %+v, want watched with a note on admission handlers", r)
	}
	var text bytes.Buffer
	(&Object{Resource: "configmaps", Namespace: "shop", Name: "web", Exists: true, Rules: []Rule{r}}).WriteText(&text)
	if !strings.Contains(text.String(), "admission handlers only") || strings.Contains(text.String(), "no record of it lately") {
		t.Errorf("text:\n%s", text.String())
	}
}
