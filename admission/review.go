package admission

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
)

// Observer is told about every admission request a rule answered.
type Observer interface {
	// Admitted is called once per request, after the answer, with how
	// long the rule took to answer.
	Admitted(rule string, operation string, result event.AdmissionResult, d time.Duration)
}

// review answers req with the handler of t (Validate or Mutate): the
// decision of the script, made in the rule's mode, or, when the call
// fails, the rule's failure policy. It never returns nil.
func (h *handler) review(ctx context.Context, t event.Type, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, event.AdmissionResult, error) {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	name := h.rule.Name
	audit := h.rule.Admission.Mode == rules.AdmissionAudit
	fail := func(err error) (*admissionv1.AdmissionResponse, event.AdmissionResult, error) {
		err = fmt.Errorf("rule %s: %s: %w", name, t.Handler(), err)
		if h.rule.Admission.FailurePolicy == rules.FailFail && !audit {
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
				Reason: metav1.StatusReasonInternalError, Message: err.Error()}
		}
		return resp, event.AdmissionFailed, err
	}
	if !h.synced() {
		return fail(fmt.Errorf("the caches of spec.reads are not synced yet"))
	}
	ev := event.Event{
		Type:     t,
		Resource: h.resource(schemaGVR(req.Resource)),
		Admission: &event.AdmissionRequest{
			Operation:   string(req.Operation),
			Namespace:   req.Namespace,
			Name:        req.Name,
			SubResource: req.SubResource,
			DryRun:      req.DryRun != nil && *req.DryRun,
			UserInfo:    userInfo(req),
		},
	}
	var err error
	if ev.Object, err = decodeObject(req.Object.Raw); err != nil {
		return fail(fmt.Errorf("decode object: %w", err))
	}
	if ev.OldObject, err = decodeObject(req.OldObject.Raw); err != nil {
		return fail(fmt.Errorf("decode oldObject: %w", err))
	}
	rt, err := h.acquire(ctx)
	if err != nil {
		return fail(err)
	}
	out, err := rt.Invoke(ev)
	h.release(rt)
	if err != nil {
		return fail(err)
	}
	v := out.Verdict
	switch {
	case t == event.Validate && v.Denied:
		msg := "rule " + name + ": " + v.Message
		if audit {
			resp.Warnings = []string{"audit: " + msg}
			return resp, event.WouldDeny, nil
		}
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
			Reason: metav1.StatusReasonForbidden, Message: msg}
		return resp, event.Denied, nil
	case t == event.Mutate && v.Change != nil:
		if ev.Object == nil {
			return fail(fmt.Errorf("there is no object to change"))
		}
		ops, err := Patch(ev.Object.Object, v.Change)
		if err != nil {
			return fail(err)
		}
		if len(ops) == 0 {
			return resp, event.Allowed, nil
		}
		patch, err := json.Marshal(ops)
		if err != nil {
			return fail(err)
		}
		if audit {
			resp.Warnings = []string{fmt.Sprintf("audit: rule %s would change the object: %s", name, patch)}
			return resp, event.WouldPatch, nil
		}
		resp.Patch = patch
		resp.PatchType = new(admissionv1.PatchTypeJSONPatch)
		return resp, event.Patched, nil
	}
	return resp, event.Allowed, nil
}

// decodeObject decodes an object of a request; nil when there is none
// (the object of a DELETE, the old object of a CREATE).
func decodeObject(raw []byte) (*unstructured.Unstructured, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(raw); err != nil {
		return nil, err
	}
	return u, nil
}

// userInfo is the requester as JSON data, as the script sees it.
func userInfo(req *admissionv1.AdmissionRequest) map[string]any {
	out := map[string]any{}
	b, err := json.Marshal(req.UserInfo)
	if err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}
