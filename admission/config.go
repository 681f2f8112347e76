package admission

import (
	"cmp"
	"crypto/x509"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	admregv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// NamespaceLabel is the label the API server puts on every Namespace, its
// name: the namespace selectors of the webhooks match on it.
const NamespaceLabel = "kubernetes.io/metadata.name"

// SystemNamespace is never intercepted, whatever the rules say: the
// control plane's own objects live there.
const SystemNamespace = "kube-system"

// Handlers are the admission handlers a rule's script declares.
type Handlers struct {
	Validate, Mutate bool
}

// HandlersOf returns the admission handlers prog declares.
func HandlersOf(prog *scripting.Program) Handlers {
	return Handlers{Validate: prog.HasHandler(event.Validate), Mutate: prog.HasHandler(event.Mutate)}
}

// Any reports whether there is an admission handler.
func (h Handlers) Any() bool { return h.Validate || h.Mutate }

// Rule is a resolved rule and the admission handlers of its script.
type Rule struct {
	Resolved *rules.Resolved
	Handlers Handlers
}

// Options say where the API server reaches kreact's webhook server, and
// what it must never intercept.
type Options struct {
	// Name names the two configurations, a ValidatingWebhookConfiguration
	// and a MutatingWebhookConfiguration. Empty means "kreact".
	Name string
	// Namespace is the namespace of Service. Without URL, the webhooks
	// call that Service, whose Pods are kreact's: Namespace is then
	// kreact's own, and never intercepted, so that kreact's Pods can
	// start while it is down. With URL it is intercepted like any other.
	Namespace string
	// PodNamespace, if set, is the namespace of the Pod kreact runs in:
	// never intercepted either, whatever URL says. Empty outside a
	// cluster, where kreact has nothing of its own to protect.
	PodNamespace string
	// URL, if set, is the base URL of the webhook server
	// ("https://127.0.0.1:8443"), for a kreact outside the cluster;
	// otherwise the API server calls Service (a Service in Namespace) on
	// Port (zero means 443).
	URL     string
	Service string
	Port    int32
	// CABundle is the PEM of the CA that signed the server's certificate.
	// Empty leaves it out, for a certificate the API server trusts
	// otherwise, or for InjectCAFrom.
	CABundle []byte
	// InjectCAFrom, if set, is cert-manager's NAMESPACE/CERTIFICATE: the
	// configurations get its cert-manager.io/inject-ca-from annotation,
	// and cert-manager's CA injector keeps their caBundle.
	InjectCAFrom string
}

// CheckCABundle checks that pem holds at least one certificate, and
// nothing else that PEM encodes.
func CheckCABundle(pem []byte) error {
	if len(pem) == 0 {
		return errors.New("no certificate")
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return errors.New("no PEM certificate")
	}
	return nil
}

// Paths of the webhook server: the handlers of rule NAME are served at
// ValidatePath+NAME and MutatePath+NAME.
const (
	ValidatePath = "/validate/"
	MutatePath   = "/mutate/"
)

// Configurations returns the webhook configurations that send the API
// server's requests to the admission handlers of rs: one webhook per rule
// and spec.watch entry in each, in the order of rs. A configuration with
// no webhook is returned all the same, empty, so that applying it clears
// what an earlier rule set left.
//
// Which requests reach a handler follows from the rule: the entry's
// resource (its version: the API server converts other versions' objects
// to it), its namespaces (a namespaceSelector on NamespaceLabel), its
// label selector (an objectSelector), and the operations of spec.events
// (add is CREATE, update UPDATE, delete DELETE; onMutate gets no DELETE,
// which has nothing to change). spec.admission gives the failure policy
// (Ignore in audit mode, which must never refuse anything) and the
// timeout. The namespaces of opts.NeverIntercepted are never intercepted.
func Configurations(rs []Rule, opts Options) (*admregv1.ValidatingWebhookConfiguration, *admregv1.MutatingWebhookConfiguration) {
	name := opts.Name
	if name == "" {
		name = "kreact"
	}
	v := &admregv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admregv1.SchemeGroupVersion.String(), Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "kreact"}},
	}
	m := &admregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: admregv1.SchemeGroupVersion.String(), Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{"app.kubernetes.io/managed-by": "kreact"}},
	}
	if opts.InjectCAFrom != "" {
		for _, meta := range []*metav1.ObjectMeta{&v.ObjectMeta, &m.ObjectMeta} {
			meta.Annotations = map[string]string{"cert-manager.io/inject-ca-from": opts.InjectCAFrom}
		}
	}
	excluded := slices.Sorted(maps.Keys(opts.NeverIntercepted()))
	for _, r := range rs {
		res := r.Resolved
		for i, w := range res.Watch {
			hook := webhook(r, i, w, excluded)
			if r.Handlers.Validate {
				if ops := operations(res.Rule, false); len(ops) > 0 {
					v.Webhooks = append(v.Webhooks, hook.validating(clientConfig(opts, ValidatePath+res.Rule.Name), ops))
				}
			}
			if r.Handlers.Mutate {
				if ops := operations(res.Rule, true); len(ops) > 0 {
					m.Webhooks = append(m.Webhooks, mutating(hook.validating(clientConfig(opts, MutatePath+res.Rule.Name), ops)))
				}
			}
		}
	}
	return v, m
}

// hook is what the validating and the mutating webhook of one watch entry
// share.
type hook struct {
	name          string
	group         string
	version       string
	resource      string
	scope         admregv1.ScopeType
	failurePolicy *admregv1.FailurePolicyType
	namespaces    *metav1.LabelSelector
	objects       *metav1.LabelSelector
	timeout       *int32
}

// validating is the webhook of h that sends ops to cc. The mutating one
// has the same fields (mutating).
func (h hook) validating(cc admregv1.WebhookClientConfig, ops []admregv1.OperationType) admregv1.ValidatingWebhook {
	return admregv1.ValidatingWebhook{
		Name:                    h.name,
		ClientConfig:            cc,
		Rules:                   h.rules(ops),
		FailurePolicy:           h.failurePolicy,
		MatchPolicy:             new(admregv1.Equivalent),
		NamespaceSelector:       h.namespaces,
		ObjectSelector:          h.objects,
		SideEffects:             new(admregv1.SideEffectClassNone),
		TimeoutSeconds:          h.timeout,
		AdmissionReviewVersions: []string{"v1"},
	}
}

// mutating is the mutating webhook with the fields of w, which the API
// server never calls again after another webhook's change.
func mutating(w admregv1.ValidatingWebhook) admregv1.MutatingWebhook {
	return admregv1.MutatingWebhook{
		Name: w.Name, ClientConfig: w.ClientConfig, Rules: w.Rules, FailurePolicy: w.FailurePolicy, MatchPolicy: w.MatchPolicy,
		NamespaceSelector: w.NamespaceSelector, ObjectSelector: w.ObjectSelector, SideEffects: w.SideEffects,
		TimeoutSeconds: w.TimeoutSeconds, AdmissionReviewVersions: w.AdmissionReviewVersions, MatchConditions: w.MatchConditions,
		ReinvocationPolicy: new(admregv1.NeverReinvocationPolicy),
	}
}

func (h hook) rules(ops []admregv1.OperationType) []admregv1.RuleWithOperations {
	return []admregv1.RuleWithOperations{{
		Operations: ops,
		Rule: admregv1.Rule{
			APIGroups:   []string{h.group},
			APIVersions: []string{h.version},
			Resources:   []string{h.resource},
			Scope:       new(h.scope),
		},
	}}
}

// WebhookName is the name of the webhooks of a rule's watch entry i: the
// rule's name then kreact.dev, and the entry's index after the name for
// all but the first (rule names have no dots, so no two collide).
func WebhookName(rule string, i int) string {
	if i == 0 {
		return rule + ".kreact.dev"
	}
	return fmt.Sprintf("%s.%d.kreact.dev", rule, i)
}

func webhook(r Rule, i int, w rules.ResolvedWatch, excluded []string) hook {
	rule := r.Resolved.Rule
	h := hook{
		name:     WebhookName(rule.Name, i),
		group:    w.Resource.GVR.Group,
		version:  w.Resource.GVR.Version,
		resource: w.Resource.GVR.Resource,
		scope:    admregv1.ClusterScope,
	}
	timeout := rule.Admission.Timeout
	if timeout == 0 {
		timeout = rules.DefaultAdmissionTimeout
	}
	h.timeout = new(int32(timeout.Seconds()))
	if w.Resource.Namespaced {
		h.scope = admregv1.NamespacedScope
	}
	policy := admregv1.Ignore
	if rule.Admission.FailurePolicy == rules.FailFail && rule.Admission.Mode != rules.AdmissionAudit {
		policy = admregv1.Fail
	}
	h.failurePolicy = &policy
	// For a Namespace, the API server matches the namespace selector on
	// the Namespace itself; for other cluster-scoped objects it has no
	// effect. So every webhook carries it.
	h.namespaces = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
		{Key: NamespaceLabel, Operator: metav1.LabelSelectorOpNotIn, Values: excluded},
	}}
	if ns := w.Watch.Namespaces; len(ns) > 0 {
		h.namespaces.MatchExpressions = append(h.namespaces.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: NamespaceLabel, Operator: metav1.LabelSelectorOpIn, Values: slices.Sorted(slices.Values(ns)),
		})
	}
	h.objects = &metav1.LabelSelector{}
	if s := w.Watch.LabelSelector; s != "" {
		// Checked when the rule was parsed.
		if sel, err := metav1.ParseToLabelSelector(s); err == nil {
			h.objects = sel
		}
	}
	return h
}

// NeverIntercepted returns the namespaces that the webhooks of o never
// intercept, each with why: kube-system, where the control plane's own
// objects live, and kreact's own namespace, where its Pods run (o's
// PodNamespace, and its Namespace when the webhooks call the Service
// there), so that kreact can never lock the control plane or itself out.
// A kreact outside the cluster (URL, no PodNamespace) has no namespace of
// its own: only kube-system is left out then.
func (o Options) NeverIntercepted() map[string]string {
	out := map[string]string{SystemNamespace: "so that kreact cannot lock the control plane out"}
	if o.URL == "" && o.Namespace != "" {
		out[o.Namespace] = "so that kreact's Pods can start while it is down: it is kreact's own namespace, its webhook Service's " +
			"(a kreact outside the cluster, called at a URL instead, intercepts it)"
	}
	if o.PodNamespace != "" {
		out[o.PodNamespace] = "so that kreact's Pods can start while it is down: it is kreact's own namespace, where it runs"
	}
	return out
}

// operations returns the operations of r's spec.events, for onMutate
// (mutate) or onValidate.
func operations(r *rules.Rule, mutate bool) []admregv1.OperationType {
	var ops []admregv1.OperationType
	for _, e := range r.Events {
		switch e {
		case event.Add:
			ops = append(ops, admregv1.Create)
		case event.Update:
			ops = append(ops, admregv1.Update)
		case event.Delete:
			if !mutate {
				ops = append(ops, admregv1.Delete)
			}
		}
	}
	return ops
}

func clientConfig(opts Options, path string) admregv1.WebhookClientConfig {
	cc := admregv1.WebhookClientConfig{CABundle: opts.CABundle}
	if opts.URL != "" {
		cc.URL = new(strings.TrimSuffix(opts.URL, "/") + path)
		return cc
	}
	port := opts.Port
	if port == 0 {
		port = 443
	}
	cc.Service = &admregv1.ServiceReference{Namespace: opts.Namespace, Name: opts.Service, Path: new(path), Port: new(port)}
	return cc
}

// Warnings returns the warnings about what the webhooks of a rule with
// admission handlers do otherwise than its spec.admission says: in audit
// mode, which must never refuse anything, failurePolicy Fail is Ignore.
// Check returns them too; `kreact webhooks` prints them beside the
// configurations, and `kreact run` logs them when it serves the rule.
func Warnings(r *rules.Rule) diag.ErrorList {
	var out diag.ErrorList
	if r.Admission.Mode == rules.AdmissionAudit && r.Admission.FailurePolicy == rules.FailFail {
		pos := r.Admission.Pos
		if !pos.IsValid() {
			pos = r.Pos
		}
		pos.Rule = r.Name
		out.Warnf(pos, "rule %s: spec.admission.failurePolicy Fail has no effect in audit mode, which refuses nothing, a failed call neither: its webhooks have failurePolicy Ignore", diag.Quote(r.Name))
	}
	return out
}

// uninterceptable are the API groups whose objects the API server never
// sends to webhooks: those that configure admission itself.
var uninterceptable = []string{"admissionregistration.k8s.io"}

// Check returns the problems of a rule's admission handlers that can be
// found before it runs, each at its position in the rule file: a watched
// resource that the API server cannot send to a webhook, or whose writes
// it never admits; a field selector (webhooks select by namespace and
// labels only); a watched namespace that the webhooks of opts never
// intercept (Options.NeverIntercepted: kube-system, kreact's own); a
// spec.timeout that leaves the handler no time to answer within
// spec.admission.timeout; an onMutate that spec.events never calls. A
// spec.admission without admission handlers is a warning. prog may be nil
// (a script that does not compile): there is nothing to check then.
func Check(res *rules.Resolved, prog *scripting.Program, opts Options) diag.ErrorList {
	var out diag.ErrorList
	r := res.Rule
	at := func(pos diag.Position) diag.Position {
		if pos.Line == 0 {
			pos = r.Pos
		}
		pos.Rule = r.Name
		return pos
	}
	if prog == nil {
		// The script does not compile: that is reported already.
		return nil
	}
	h := HandlersOf(prog)
	if !h.Any() {
		if r.Admission.Pos.Line > 0 {
			out.Warnf(at(r.Admission.Pos), "rule %s: spec.admission applies to onValidate and onMutate, and the script declares neither", diag.Quote(r.Name))
		}
		return out
	}
	out = append(out, Warnings(r)...)
	never := opts.NeverIntercepted()
	for i, w := range res.Watch {
		path := fmt.Sprintf("spec.watch[%d]", i)
		gvr := w.Resource.GVR
		switch {
		case slices.Contains(uninterceptable, gvr.Group):
			out.Addf(at(w.Watch.Pos), "%s: the API server does not call admission webhooks for %s, so onValidate and onMutate cannot see them", path, gvr.GroupResource())
		case len(w.Resource.Verbs) > 0 && !slices.ContainsFunc(w.Resource.Verbs, func(v string) bool { return v == "create" || v == "update" || v == "delete" }):
			out.Addf(at(w.Watch.Pos), "%s: %s cannot be created, updated or deleted (its verbs: %s), so there is nothing to admit", path, gvr.GroupResource(), strings.Join(w.Resource.Verbs, ", "))
		}
		if w.Watch.FieldSelector != "" {
			out.Addf(at(w.Watch.Pos), "%s: a field selector cannot narrow admission requests (webhooks select by namespace and labels); check the field in onValidate or onMutate instead", path)
		}
		for _, ns := range slices.Compact(slices.Sorted(slices.Values(w.Watch.Namespaces))) {
			if why, ok := never[ns]; ok {
				out.Addf(at(cmp.Or(w.Watch.NamespacesPos, w.Watch.Pos)), "rule %s: %s.namespaces: %s is never intercepted, %s", diag.Quote(r.Name), path, ns, why)
			}
		}
	}
	if r.Timeout >= r.Admission.Timeout {
		out.Addf(at(r.Admission.Pos), "rule %s: spec.timeout (%v) must be shorter than spec.admission.timeout (%v), or the API server stops waiting before the handler is stopped", diag.Quote(r.Name), r.Timeout, r.Admission.Timeout)
	}
	if h.Mutate && len(operations(r, true)) == 0 {
		out.Addf(at(r.Pos), "rule %s: onMutate is never called: spec.events lists only delete, and a deletion has nothing to change", diag.Quote(r.Name))
	}
	return out
}
