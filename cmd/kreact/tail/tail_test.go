package tail

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestJoinKindRefs(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"deploy", "cm"}, []string{"deploy", "cm"}},
		{[]string{"apps/v1", "Deployment"}, []string{"apps/v1 Deployment"}},
		{[]string{"apps/v1", "Deployment", "pods"}, []string{"apps/v1 Deployment", "pods"}},
		{[]string{"deployments.v1.apps"}, []string{"deployments.v1.apps"}},
	}
	for _, tt := range tests {
		if got := JoinKindRefs(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("JoinKindRefs(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestPrinterFormats(t *testing.T) {
	obj := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap"}}
	obj.SetNamespace("shop")
	obj.SetName("web")
	obj.SetResourceVersion("42")
	obj.SetLabels(map[string]string{"app": "web"})

	print := func(format string) string {
		var out bytes.Buffer
		p := &printer{out: &out, format: format}
		p.print("ADDED", "configmaps", obj)
		return out.String()
	}
	if got := print(""); !strings.HasSuffix(got, "  ADDED     configmaps  shop/web  42\n") {
		t.Errorf("default line = %q", got)
	}
	if got := print("wide"); !strings.Contains(got, "shop/web  42  uid= gen=0 labels=app=web") {
		t.Errorf("wide line = %q", got)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(print("json")), &rec); err != nil || rec["type"] != "ADDED" || rec["resource"] != "configmaps" {
		t.Errorf("json record = %v, %v", rec, err)
	}
	y := print("yaml")
	if !strings.HasPrefix(y, "---\n") {
		t.Errorf("yaml record does not start a document: %q", y)
	}
	if err := yaml.Unmarshal([]byte(strings.TrimPrefix(y, "---\n")), &rec); err != nil || rec["type"] != "ADDED" {
		t.Errorf("yaml record = %v, %v", rec, err)
	}
}

func TestRefs(t *testing.T) {
	got := Refs([]string{"deploy,cm", " ", "apps/v1", "Deployment", "pods, secrets"})
	want := []string{"deploy", "cm", "apps/v1 Deployment", "pods", "secrets"}
	if !slices.Equal(got, want) {
		t.Errorf("Refs = %q, want %q", got, want)
	}
}
