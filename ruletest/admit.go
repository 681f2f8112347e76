package ruletest

import (
	"context"
	"encoding/json"
	"strings"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	admissionv1 "k8s.io/api/admission/v1"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/admission"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/event"
)

// reviewer is a rule's admission handlers in a case.
type reviewer struct {
	rule admission.Rule
	r    *admission.Reviewer
}

// admissionHost is a rule's host for its admission handlers: they read
// only spec.reads, as under kreact run (admission.Readable).
type admissionHost struct{ *host }

func (h admissionHost) Get(res apiresource.Resource, namespace, name string) (*unstructured.Unstructured, error) {
	if err := admission.Readable(h.rule, res.GVR.GroupResource()); err != nil {
		return nil, err
	}
	return h.host.Get(res, namespace, name)
}

func (h admissionHost) List(res apiresource.Resource, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	if err := admission.Readable(h.rule, res.GVR.GroupResource()); err != nil {
		return nil, err
	}
	return h.host.List(res, namespace, selector)
}

// AnswerFields describes what a rule's admission handler answered to a
// request, as a test expects it: rule, handler, allowed, and message,
// patch and warnings when there are any.
func AnswerFields(rule string, t event.Type, resp *admissionv1.AdmissionResponse) Fields {
	fs := Fields{{"rule", rule}, {"handler", string(t)}, {"allowed", resp.Allowed}}
	if resp.Result != nil && resp.Result.Message != "" {
		fs = append(fs, Field{"message", resp.Result.Message})
	}
	if len(resp.Patch) > 0 {
		fs = append(fs, Field{"patch", decodeJSON(resp.Patch)})
	}
	if len(resp.Warnings) > 0 {
		fs = append(fs, Field{"warnings", normalize(resp.Warnings)})
	}
	return fs
}

var namespacesGR = schema.GroupResource{Resource: "namespaces"}

// admit sends an admission request to the admission handlers of the rules
// whose webhooks would intercept it, as the API server calls them: the
// mutating ones first, in load order, each given the object as the ones
// before changed it, then the validating ones, on the final object. A
// mutating handler that refuses ends the request. The answers are
// recorded in res; the cache does not change.
func admit(ctx context.Context, st *store, reviewers []reviewer, ev Event, res *Result) *Error {
	a := ev.Admission
	o := a.Object
	name := o.Resource.Kind + " " + objectName(o.Object)
	req := &admissionv1.AdmissionRequest{
		UID:       "kreact-test",
		Kind:      metav1.GroupVersionKind{Group: o.Resource.GVR.Group, Version: o.Resource.GVR.Version, Kind: o.Resource.Kind},
		Resource:  metav1.GroupVersionResource{Group: o.Resource.GVR.Group, Version: o.Resource.GVR.Version, Resource: o.Resource.GVR.Resource},
		Name:      o.Object.GetName(),
		Namespace: o.Object.GetNamespace(),
		Operation: admissionv1.Operation(a.Operation),
		DryRun:    &a.DryRun,
	}
	if a.UserInfo != nil {
		data, _ := json.Marshal(a.UserInfo)
		if err := json.Unmarshal(data, &req.UserInfo); err != nil {
			return problem(ev.Pos, "admit: userInfo: %v", err)
		}
	} else {
		req.UserInfo = authenticationv1.UserInfo{}
	}
	old := st.get(keyOf(o))
	if a.OldObject != nil {
		old = a.OldObject.Object
	}
	switch a.Operation {
	case "CREATE":
		old = nil
	case "UPDATE", "DELETE":
		if old == nil {
			return problem(ev.Pos, "admit: %s of %s, which is not in the cache; add it first, or give oldObject", strings.ToLower(a.Operation), name)
		}
	}
	if a.Operation != "DELETE" {
		req.Object = raw(o.Object)
	}
	if old != nil {
		req.OldObject = raw(old)
	}
	nsLabels := map[string]string{admission.NamespaceLabel: req.Namespace}
	if ns := st.get(objectKey{namespacesGR, "", req.Namespace}); ns != nil {
		for k, v := range ns.GetLabels() {
			nsLabels[k] = v
		}
	}
	for _, rv := range reviewers {
		if !admission.Intercepts(rv.rule, event.Mutate, req, nsLabels, "") {
			continue
		}
		resp, _, err := rv.r.Review(ctx, event.Mutate, req)
		res.Admission = append(res.Admission, AnswerFields(rv.rule.Resolved.Rule.Name, event.Mutate, resp))
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
		}
		if !resp.Allowed {
			return nil
		}
		if len(resp.Patch) > 0 {
			patch, err := jsonpatch.DecodePatch(resp.Patch)
			if err == nil {
				req.Object.Raw, err = patch.Apply(req.Object.Raw)
			}
			if err != nil {
				return problem(ev.Pos, "admit: the patch of rule %q does not apply: %v", rv.rule.Resolved.Rule.Name, err)
			}
		}
	}
	for _, rv := range reviewers {
		if !admission.Intercepts(rv.rule, event.Validate, req, nsLabels, "") {
			continue
		}
		resp, _, err := rv.r.Review(ctx, event.Validate, req)
		res.Admission = append(res.Admission, AnswerFields(rv.rule.Resolved.Rule.Name, event.Validate, resp))
		if err != nil {
			res.Errors = append(res.Errors, err.Error())
		}
	}
	return nil
}

func raw(u *unstructured.Unstructured) runtime.RawExtension {
	data, err := u.MarshalJSON()
	if err != nil {
		return runtime.RawExtension{}
	}
	return runtime.RawExtension{Raw: data}
}
