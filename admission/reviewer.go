package admission

import (
	"context"
	"encoding/json"
	"log/slog"

	admissionv1 "k8s.io/api/admission/v1"
	admregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/scripting"
)

// Reviewer answers the admission requests of one rule with its handlers,
// through the code that Server answers the API server with: kreact test
// runs it offline, with a Host of its own (the test's cache). It is safe
// for concurrent use; Close it when done.
type Reviewer struct{ h *handler }

// NewReviewer returns a Reviewer of rule r, whose program is prog, whose
// scripts reach host.
func NewReviewer(r Rule, prog *scripting.Program, host scripting.Host) *Reviewer {
	res := r.Resolved
	h := &handler{
		rule: res.Rule, resolved: res, prog: prog, handlers: r.Handlers,
		logger: slog.New(slog.DiscardHandler),
		now:    host.Now,
		host:   host,
		plan:   delivery.Plan(res),
		slots:  make(chan struct{}, max(1, res.Rule.Workers)),
	}
	return &Reviewer{h: h}
}

// Review answers req with the rule's handler of t (event.Validate or
// event.Mutate), as the server would: the response, what became of
// the request, and the handler's error when it failed (the response then
// follows the failure policy).
func (r *Reviewer) Review(ctx context.Context, t event.Type, req *admissionv1.AdmissionRequest) (*admissionv1.AdmissionResponse, event.AdmissionResult, error) {
	return r.h.review(ctx, t, req)
}

// Close releases the Reviewer's runtimes.
func (r *Reviewer) Close() { r.h.close() }

// Intercepts reports whether the API server would send req to the
// handler of t (event.Validate or event.Mutate) of rule r,
// through the webhooks that Configurations derives for it: the resource
// (any version: the webhooks match equivalent versions), the operation,
// the namespace selector (on namespaceLabels, the labels of the
// request's namespace; on the object's own for a Namespace) and the
// object selector (on the labels of the object or of the old object).
// The namespaces kreact never intercepts are kube-system and, when not
// empty, kreactNamespace.
func Intercepts(r Rule, t event.Type, req *admissionv1.AdmissionRequest, namespaceLabels map[string]string, kreactNamespace string) bool {
	if (t == event.Validate && !r.Handlers.Validate) || (t == event.Mutate && !r.Handlers.Mutate) {
		return false
	}
	v, m := Configurations([]Rule{r}, Options{Namespace: kreactNamespace})
	type hook struct {
		rules            []admregv1.RuleWithOperations
		namespaces, objs *metav1.LabelSelector
	}
	var hooks []hook
	if t == event.Validate {
		for _, w := range v.Webhooks {
			hooks = append(hooks, hook{w.Rules, w.NamespaceSelector, w.ObjectSelector})
		}
	} else {
		for _, w := range m.Webhooks {
			hooks = append(hooks, hook{w.Rules, w.NamespaceSelector, w.ObjectSelector})
		}
	}
	objLabels, oldLabels := objectLabels(req.Object.Raw), objectLabels(req.OldObject.Raw)
	isNamespace := req.Resource.Group == "" && req.Resource.Resource == "namespaces"
	for _, w := range hooks {
		if !matchesRules(w.rules, req) {
			continue
		}
		if req.Namespace != "" || isNamespace {
			nsLabels := namespaceLabels
			if isNamespace {
				nsLabels = objLabels
				if nsLabels == nil {
					nsLabels = oldLabels
				}
			}
			if !selects(w.namespaces, nsLabels) {
				continue
			}
		}
		// As the API server: an empty selector matches every request, any
		// other the object or the old object, whichever there is.
		if w.objs == nil || len(w.objs.MatchLabels)+len(w.objs.MatchExpressions) == 0 ||
			objLabels != nil && selects(w.objs, objLabels) || oldLabels != nil && selects(w.objs, oldLabels) {
			return true
		}
	}
	return false
}

func matchesRules(rs []admregv1.RuleWithOperations, req *admissionv1.AdmissionRequest) bool {
	if req.SubResource != "" {
		return false
	}
	for _, r := range rs {
		group := len(r.APIGroups) > 0 && (r.APIGroups[0] == req.Resource.Group)
		resource := len(r.Resources) > 0 && (r.Resources[0] == req.Resource.Resource)
		op := false
		for _, o := range r.Operations {
			op = op || string(o) == string(req.Operation)
		}
		if group && resource && op {
			return true
		}
	}
	return false
}

// selects reports whether sel matches set; a nil selector matches all.
func selects(sel *metav1.LabelSelector, set map[string]string) bool {
	if sel == nil {
		return true
	}
	s, err := metav1.LabelSelectorAsSelector(sel)
	if err != nil {
		return false
	}
	return s.Matches(labels.Set(set))
}

// objectLabels returns the labels of a request's object, nil when there
// is no object.
func objectLabels(raw []byte) map[string]string {
	if len(raw) == 0 {
		return nil
	}
	var obj struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil
	}
	if obj.Metadata.Labels == nil {
		return map[string]string{}
	}
	return obj.Metadata.Labels
}
