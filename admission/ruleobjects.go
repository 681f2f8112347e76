package admission

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"time"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
)

// RuleObjectsPath is where the server answers for rule objects: a Rule
// or a ClusterRule created or changed (ServerOptions.RuleObjects). Rule
// names have no "/", so no rule's ValidatePath+NAME is it.
const RuleObjectsPath = "/kreact.dev/rules"

// RuleObjectsWebhook is the name of the webhook of rule objects in the
// RuleObjectsConfiguration, which kubectl quotes in a refusal.
const RuleObjectsWebhook = "rules.kreact.dev"

// ruleObjectResources are the plurals of the rule CRDs (rules.CRDs).
var ruleObjectResources = []string{"rules", "clusterrules"}

// ruleObjectsTimeout is how long the API server waits for the check of a
// rule object: compiling a script, TypeScript's too, takes well under it.
const ruleObjectsTimeout = 10 * time.Second

// RuleObjectChecker checks a rule object, a Rule or a ClusterRule with
// the content an unstructured.Unstructured holds: its errors refuse it,
// its warnings go back to the client with the answer. kreact run's is
// validate.CheckObject, the checks of `kreact validate`, against the
// cluster's resources. It is called from any number of goroutines at
// once. An error (ctx ended) admits the object, as the webhook's failure
// policy does when kreact is away.
type RuleObjectChecker func(ctx context.Context, content map[string]any) (diag.ErrorList, error)

// RuleObjectsConfiguration returns the ValidatingWebhookConfiguration
// that sends the creates and updates of rule objects to the server's
// RuleObjectsPath, named after opts.Name with "-rule-objects" (kreact-rule-objects),
// so that the configurations of the rules' own handlers, which come and
// go with those rules, never touch it. Its failure policy is Ignore:
// while kreact is down, applies go through, and the CRDs' schema alone
// refuses what is malformed. Status writes are not sent (the webhook
// names the resources, not their status subresources).
func RuleObjectsConfiguration(opts Options) *admregv1.ValidatingWebhookConfiguration {
	v := &admregv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admregv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: cmp.Or(opts.Name, "kreact") + "-rule-objects", Labels: map[string]string{"app.kubernetes.io/managed-by": "kreact"}},
		Webhooks: []admregv1.ValidatingWebhook{{
			Name:         RuleObjectsWebhook,
			ClientConfig: clientConfig(opts, RuleObjectsPath),
			Rules: []admregv1.RuleWithOperations{{
				Operations: []admregv1.OperationType{admregv1.Create, admregv1.Update},
				Rule: admregv1.Rule{
					APIGroups:   []string{rules.Group},
					APIVersions: []string{rules.Version},
					Resources:   ruleObjectResources,
					Scope:       new(admregv1.AllScopes),
				},
			}},
			FailurePolicy:           new(admregv1.Ignore),
			MatchPolicy:             new(admregv1.Equivalent),
			SideEffects:             new(admregv1.SideEffectClassNone),
			TimeoutSeconds:          new(int32(ruleObjectsTimeout / time.Second)),
			AdmissionReviewVersions: []string{"v1"},
		}},
	}
	if opts.InjectCAFrom != "" {
		v.Annotations = map[string]string{"cert-manager.io/inject-ca-from": opts.InjectCAFrom}
	}
	return v
}

// ReviewRuleObject answers an admission request for a rule object with
// ServerOptions.RuleObjects: refused with every error, one a line, as
// `kreact validate` prints them, and allowed with its warnings
// otherwise. An update that leaves what the rule says as it was (its
// spec and description: a label, a finalizer, kreact's own metadata) is
// allowed unchecked, and so is any change of an object being deleted, so
// that a rule that was stored broken (while kreact was down, or before a
// resource it names went away) can still be labelled, released and
// deleted.
func (s *Server) ReviewRuleObject(ctx context.Context, req *admissionv1.AdmissionRequest) *admissionv1.AdmissionResponse {
	allow := &admissionv1.AdmissionResponse{UID: req.UID, Allowed: true}
	if s.opts.RuleObjects == nil || (req.Operation != admissionv1.Create && req.Operation != admissionv1.Update) {
		return allow
	}
	var content map[string]any
	if err := json.Unmarshal(req.Object.Raw, &content); err != nil {
		// The API server sent what it decoded: nothing for kreact to say.
		return allow
	}
	md, _ := content["metadata"].(map[string]any)
	if md == nil {
		return allow
	}
	if _, deleting := md["deletionTimestamp"]; deleting {
		return allow
	}
	if req.Operation == admissionv1.Update && sameRule(req.OldObject.Raw, content) {
		return allow
	}
	if _, ok := md["namespace"]; !ok && req.Namespace != "" {
		md["namespace"] = req.Namespace
	}
	problems, err := s.opts.RuleObjects(ctx, content)
	if err != nil {
		s.log.Warn("admission: rule object not checked", "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "error", err)
		allow.Warnings = []string{fmt.Sprintf("kreact could not check the rule: %v", err)}
		return allow
	}
	var errs []string
	for _, p := range problems {
		if p.Warning {
			allow.Warnings = append(allow.Warnings, p.Error())
		} else {
			errs = append(errs, p.Error())
		}
	}
	if len(errs) == 0 {
		return allow
	}
	n := "1 error"
	if len(errs) > 1 {
		n = fmt.Sprintf("%d errors", len(errs))
	}
	s.log.Info("admission: rule object refused", "kind", req.Kind.Kind, "namespace", req.Namespace, "name", req.Name, "operation", req.Operation, "errors", len(errs))
	allow.Allowed = false
	allow.Result = &metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnprocessableEntity, Reason: metav1.StatusReasonInvalid,
		Message: n + " (kreact validate):\n" + strings.Join(errs, "\n")}
	return allow
}

// sameRule reports whether the rule object old says what content says:
// the same spec and description annotation.
func sameRule(old []byte, content map[string]any) bool {
	var prev map[string]any
	if len(old) == 0 || json.Unmarshal(old, &prev) != nil {
		return false
	}
	description := func(obj map[string]any) any {
		md, _ := obj["metadata"].(map[string]any)
		a, _ := md["annotations"].(map[string]any)
		return a[rules.DescriptionAnnotation]
	}
	return reflect.DeepEqual(prev["spec"], content["spec"]) && reflect.DeepEqual(description(prev), description(content))
}
