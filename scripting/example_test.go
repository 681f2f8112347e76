package scripting_test

import (
	"fmt"
	"log/slog"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/scripting"
)

var deployments = apiresource.Resource{
	GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
	Kind:       "Deployment",
	Namespaced: true,
}

// printHost is a Host that knows only Deployments and prints actions.
type printHost struct{}

func (printHost) ResolveResource(string) (apiresource.Resource, error)     { return deployments, nil }
func (printHost) ResolveKind(string, string) (apiresource.Resource, error) { return deployments, nil }
func (printHost) Get(apiresource.Resource, string, string) (*unstructured.Unstructured, error) {
	return nil, nil
}
func (printHost) List(apiresource.Resource, string, labels.Selector) ([]*unstructured.Unstructured, error) {
	return nil, nil
}
func (printHost) Permit(actions.Action) error                  { return nil }
func (printHost) Log(_ slog.Level, msg string, _ ...slog.Attr) { fmt.Println("log:", msg) }
func (printHost) Now() time.Time                               { return time.Unix(0, 0) }

func Example() {
	const script = `
function onUpdate(oldObj, newObj, ctx) {
  if (!ctx.changed.includes("spec.replicas")) return;
  kreact.log(newObj.metadata.name + " scaled to " + newObj.spec.replicas);
  kreact.patch(newObj, {metadata: {annotations: {"example.com/scaled-at": kreact.now()}}});
}`
	// Compile once per rule...
	p, err := scripting.Compile("rules/scaled.js", script, scripting.CompileOptions{})
	if err != nil {
		fmt.Println(err)
		return
	}
	// ...build one runtime per worker goroutine...
	r, err := scripting.NewRuntime(p, printHost{}, scripting.RuntimeOptions{Rule: "scaled"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	// ...and call it for every event. The call returns the actions it asked
	// for; they are the caller's to queue.
	oldObj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec":     map[string]any{"replicas": int64(1)},
	}}
	newObj := oldObj.DeepCopy()
	newObj.Object["spec"].(map[string]any)["replicas"] = int64(3)
	asked, err := r.Call(event.Event{
		Type:      event.Update,
		OldObject: oldObj,
		Object:    newObj,
		Changed:   event.ChangedPaths(oldObj.Object, newObj.Object, []string{"status"}),
		Resource:  deployments,
	})
	for _, a := range asked {
		fmt.Printf("%s %s %s/%s %s (from %s)\n", a.Verb, a.Resource.Resource, a.Namespace, a.Name, a.PatchData, a.Origin.String())
	}
	fmt.Println("error:", err)
	// Output:
	// log: web scaled to 3
	// patch deployments default/web {"metadata":{"annotations":{"example.com/scaled-at":"1970-01-01T00:00:00Z"}}} (from rules/scaled.js:5:15)
	// error: <nil>
}

func ExampleCompile_inlineYAML() {
	// A script inside a YAML file: its first line is line 9 of the file and
	// the block is indented by 4 spaces.
	_, err := scripting.Compile("rules/broken.yaml", "function onAdd(obj) {\n  return obj.;\n}\n",
		scripting.CompileOptions{LineOffset: 8, ColumnOffset: 4})
	fmt.Println(err)
	// Output:
	// rules/broken.yaml:10:18: Unexpected token ;
}
