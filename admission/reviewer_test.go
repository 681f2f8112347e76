package admission

import (
	"encoding/json"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kreact/kreact/event"
)

func TestIntercepts(t *testing.T) {
	rs := loadRules(t, "testdata/rules.yaml")
	byName := map[string]Rule{}
	for _, r := range rs {
		byName[r.Resolved.Rule.Name] = r
	}
	raw := func(labels map[string]string) runtime.RawExtension {
		b, _ := json.Marshal(map[string]any{"metadata": map[string]any{"name": "x", "labels": labels}})
		return runtime.RawExtension{Raw: b}
	}
	req := func(group, resource, ns string, op admissionv1.Operation, labels map[string]string) *admissionv1.AdmissionRequest {
		r := &admissionv1.AdmissionRequest{
			Resource:  metav1.GroupVersionResource{Group: group, Version: "v1", Resource: resource},
			Namespace: ns, Operation: op,
		}
		if op == admissionv1.Delete {
			r.OldObject = raw(labels)
		} else {
			r.Object = raw(labels)
		}
		return r
	}
	nsLabels := func(ns string) map[string]string { return map[string]string{NamespaceLabel: ns} }
	for _, tt := range []struct {
		name string
		rule string
		t    event.Type
		req  *admissionv1.AdmissionRequest
		want bool
	}{
		{"a new Namespace", "namespace-defaults", event.Mutate, req("", "namespaces", "", admissionv1.Create, map[string]string{NamespaceLabel: "team-a"}), true},
		{"an updated Namespace: events are add only", "namespace-defaults", event.Mutate, req("", "namespaces", "", admissionv1.Update, map[string]string{NamespaceLabel: "team-a"}), false},
		{"kube-system itself", "namespace-defaults", event.Mutate, req("", "namespaces", "", admissionv1.Create, map[string]string{NamespaceLabel: "kube-system"}), false},
		{"kreact's own namespace", "namespace-defaults", event.Mutate, req("", "namespaces", "", admissionv1.Create, map[string]string{NamespaceLabel: "kreact-system"}), false},
		{"no onValidate", "namespace-defaults", event.Validate, req("", "namespaces", "", admissionv1.Create, nil), false},
		{"a selected Deployment in a watched namespace", "owner-label", event.Validate, req("apps", "deployments", "prod", admissionv1.Create, map[string]string{"tier": "web"}), true},
		{"a legacy one", "owner-label", event.Validate, req("apps", "deployments", "prod", admissionv1.Create, map[string]string{"tier": "web", "legacy": "yes"}), false},
		{"in another namespace", "owner-label", event.Validate, req("apps", "deployments", "qa", admissionv1.Create, map[string]string{"tier": "web"}), false},
		{"a ConfigMap anywhere", "owner-label", event.Validate, req("", "configmaps", "qa", admissionv1.Update, nil), true},
		{"but in kube-system", "owner-label", event.Validate, req("", "configmaps", "kube-system", admissionv1.Update, nil), false},
		{"no DELETE for onMutate", "owner-label", event.Mutate, req("", "configmaps", "qa", admissionv1.Delete, nil), false},
		{"DELETE for onValidate", "owner-label", event.Validate, req("", "configmaps", "qa", admissionv1.Delete, nil), true},
		{"a resource not watched", "owner-label", event.Validate, req("", "secrets", "qa", admissionv1.Create, nil), false},
		{"events update and delete: no CREATE", "audited", event.Validate, req("", "configmaps", "qa", admissionv1.Create, nil), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			labels := nsLabels(tt.req.Namespace)
			if got := Intercepts(byName[tt.rule], tt.t, tt.req, labels, "kreact-system"); got != tt.want {
				t.Errorf("Intercepts = %v, want %v", got, tt.want)
			}
		})
	}
	sub := req("", "configmaps", "qa", admissionv1.Update, nil)
	sub.SubResource = "status"
	if Intercepts(byName["owner-label"], event.Validate, sub, nsLabels("qa"), "") {
		t.Error("a subresource is intercepted")
	}
}
