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

// Result is what became of an admission request, for metrics and logs.
type Result string

// The results of a request.
const (
	// Allowed: the handler allowed it unchanged.
	Allowed Result = "allowed"
	// Denied: onValidate denied it (enforce mode).
	Denied Result = "denied"
	// Patched: onMutate changed the object (enforce mode).
	Patched Result = "patched"
	// WouldDeny and WouldPatch: audit mode let the request through
	// unchanged where enforce mode would have denied or changed it.
	WouldDeny  Result = "would-deny"
	WouldPatch Result = "would-patch"
	// Failed: the handler failed (threw, timed out, returned something
	// kreact cannot use); the rule's failure policy answered.
	Failed Result = "failed"
)

// Observer is told about every admission request a rule answered.
type Observer interface {
	// Admitted is called once per request, after the answer, with how
	// long the rule took to answer.
	Admitted(rule string, operation string, result Result, d time.Duration)
}

// review answers req with the handler of t (Validate or Mutate): the
// decision of the script, made in the rule's mode, or, when the call
// fails, the rule's failure policy. It never returns nil.
func (h *handler) review(ctx context.Context, t event.Type, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, Result, error) {
	resp := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	name := h.rule.Name
	audit := h.rule.Admission.Mode == rules.AdmissionAudit
	fail := func(err error) (*admissionv1.AdmissionResponse, Result, error) {
		err = fmt.Errorf("rule %s: %s: %w", name, t.Handler(), err)
		if h.rule.Admission.FailurePolicy == rules.FailFail && !audit {
			resp.Allowed = false
			resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusInternalServerError,
				Reason: metav1.StatusReasonInternalError, Message: err.Error()}
		}
		return resp, Failed, err
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
			return resp, WouldDeny, nil
		}
		resp.Allowed = false
		resp.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusForbidden,
			Reason: metav1.StatusReasonForbidden, Message: msg}
		return resp, Denied, nil
	case t == event.Mutate && v.Change != nil:
		if ev.Object == nil {
			return fail(fmt.Errorf("there is no object to change"))
		}
		ops, err := Patch(ev.Object.Object, v.Change)
		if err != nil {
			return fail(err)
		}
		if len(ops) == 0 {
			return resp, Allowed, nil
		}
		patch, err := json.Marshal(ops)
		if err != nil {
			return fail(err)
		}
		if audit {
			resp.Warnings = []string{fmt.Sprintf("audit: rule %s would change the object: %s", name, patch)}
			return resp, WouldPatch, nil
		}
		resp.Patch = patch
		resp.PatchType = new(admissionv1.PatchTypeJSONPatch)
		return resp, Patched, nil
	}
	return resp, Allowed, nil
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
