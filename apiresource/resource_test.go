package apiresource

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestGVKAndEqual(t *testing.T) {
	deploy := Resource{
		GVR:        schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"},
		Kind:       "Deployment",
		Namespaced: true,
		ShortNames: []string{"deploy"},
		Verbs:      []string{"list", "watch"},
	}
	if got, want := deploy.GVK(), (schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}); got != want {
		t.Errorf("GVK() = %v, want %v", got, want)
	}
	same := deploy
	same.ShortNames = []string{"deploy"}
	if !deploy.Equal(same) {
		t.Error("copies with equal slices are not Equal")
	}
	other := deploy
	other.ShortNames = []string{"dp"}
	if deploy.Equal(other) {
		t.Error("resources with different short names are Equal")
	}
}
