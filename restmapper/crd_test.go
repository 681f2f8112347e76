package restmapper_test

import (
	"fmt"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kreact/kreact/restmapper"
)

func crdFromYAML(t *testing.T, y string) *unstructured.Unstructured {
	t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(y), &obj); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: obj}
}

func TestResourcesFromCRD(t *testing.T) {
	rs, err := restmapper.ResourcesFromCRD(crdFromYAML(t, `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.kreact.io}
spec:
  group: example.kreact.io
  scope: Cluster
  names: {plural: gizmos, kind: Gizmo, shortNames: [gz], categories: [all]}
  versions:
  - {name: v1alpha1, served: true, storage: false}
  - {name: v1beta1, served: true, storage: true, subresources: {status: {}}}
  - {name: v1, served: true, storage: false, subresources: {status: {}, scale: {specReplicasPath: .spec.replicas, statusReplicasPath: .status.replicas}}}
  - {name: v2, served: false, storage: false}
`))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range rs {
		got = append(got, fmt.Sprintf("%s kind=%s singular=%s namespaced=%t short=%v categories=%v preferred=%t subresources=%v",
			r.GVR, r.Kind, r.Singular, r.Namespaced, r.ShortNames, r.Categories, r.Preferred, r.Subresources))
	}
	want := []string{
		"example.kreact.io/v1, Resource=gizmos kind=Gizmo singular=gizmo namespaced=false short=[gz] categories=[all] preferred=true subresources=[scale status]",
		"example.kreact.io/v1beta1, Resource=gizmos kind=Gizmo singular=gizmo namespaced=false short=[gz] categories=[all] preferred=false subresources=[status]",
		"example.kreact.io/v1alpha1, Resource=gizmos kind=Gizmo singular=gizmo namespaced=false short=[gz] categories=[all] preferred=false subresources=[]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, r := range rs {
		if !strings.Contains(strings.Join(r.Verbs, ","), "list") || !strings.Contains(strings.Join(r.Verbs, ","), "watch") {
			t.Errorf("%s verbs %v lack list or watch", r.GVR, r.Verbs)
		}
	}
}

func TestResourcesFromCRDReportsEveryProblem(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"not a v1 CRD", `
apiVersion: apiextensions.k8s.io/v1beta1
kind: CustomResourceDefinition
metadata: {name: a.b}`, []string{"want apiVersion apiextensions.k8s.io/v1"}},
		{"everything missing", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: x}
spec: {scope: Somewhere}`, []string{
			"spec.group is required", "spec.names.plural is required", "spec.names.kind is required",
			"spec.scope must be Namespaced or Cluster", "no served version",
		}},
		{"wrong name, nothing served", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmo.example.kreact.io}
spec:
  group: example.kreact.io
  scope: Namespaced
  names: {plural: gizmos, kind: Gizmo}
  versions: [{name: v1, served: false, storage: true}]`, []string{
			`metadata.name must be "gizmos.example.kreact.io"`, "no served version",
		}},
		{"wrong types", `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: gizmos.example.kreact.io}
spec:
  group: example.kreact.io
  scope: Namespaced
  names: {plural: gizmos, kind: Gizmo, shortNames: gz}
  versions: [{served: true}]`, []string{"spec.names.shortNames", "spec.versions[0].name is required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := restmapper.ResourcesFromCRD(crdFromYAML(t, tt.yaml))
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	if _, err := restmapper.ResourcesFromCRD(nil); err == nil {
		t.Error("nil CRD: no error")
	}
}
