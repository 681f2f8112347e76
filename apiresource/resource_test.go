package apiresource

import (
	"strings"
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

// TestPath: the paths client-go's dynamic client requests.
func TestPath(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	deploy := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	for _, c := range []struct {
		got  []string
		want string
	}{
		{Path(cm, "", "", ""), "/api/v1/configmaps"},
		{Path(cm, "ns", "", ""), "/api/v1/namespaces/ns/configmaps"},
		{Path(deploy, "ns", "web", "scale"), "/apis/apps/v1/namespaces/ns/deployments/web/scale"},
		{Path(deploy, "", "web", ""), "/apis/apps/v1/deployments/web"},
	} {
		if got := "/" + strings.Join(c.got, "/"); got != c.want {
			t.Errorf("got %s, want %s", got, c.want)
		}
	}
}
