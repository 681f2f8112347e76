//go:build e2e

package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	authenticationv1 "k8s.io/api/authentication/v1"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/engine"
	"github.com/kreact/kreact/event"
	"github.com/kreact/kreact/internal/testcluster"
	"github.com/kreact/kreact/rules"
)

var (
	deployments         = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	serviceAccounts     = schema.GroupVersionResource{Version: "v1", Resource: "serviceaccounts"}
	roles               = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "roles"}
	roleBindings        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "rolebindings"}
	clusterRoles        = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterroles"}
	clusterRoleBindings = schema.GroupVersionResource{Group: "rbac.authorization.k8s.io", Version: "v1", Resource: "clusterrolebindings"}
	policies            = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicies"}
	policyBindings      = schema.GroupVersionResource{Group: "admissionregistration.k8s.io", Version: "v1", Resource: "validatingadmissionpolicybindings"}
)

// actionFailures is an engine.Observer that keeps the actions that failed
// for good, as the rule's failure logs and metrics see them.
type actionFailures struct {
	mu     sync.Mutex
	failed []actions.Result
}

var _ engine.Observer = (*actionFailures)(nil)

func (f *actionFailures) ActionResult(r actions.Result) {
	if r.Outcome != actions.Failed {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failed = append(f.failed, r)
}
func (f *actionFailures) list() []actions.Result {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.failed)
}
func (f *actionFailures) Event(string, string, event.Type)                     {}
func (f *actionFailures) HandlerCall(string, event.Type, time.Duration, error) {}
func (f *actionFailures) ChangesDropped(string, int)                           {}
func (f *actionFailures) HandlerGivenUp(string, event.Type, error)             {}

// create creates the object of YAML src with the test's (an
// administrator's) client.
func (h *harness) create(gvr schema.GroupVersionResource, src string) {
	h.t.Helper()
	var obj map[string]any
	if err := yaml.Unmarshal([]byte(src), &obj); err != nil {
		h.t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	_, err := h.client.Resource(gvr).Namespace(u.GetNamespace()).Create(h.t.Context(), u, metav1.CreateOptions{})
	if gvr == serviceAccounts && apierrors.IsAlreadyExists(err) {
		return // the namespace's default, made by kube-controller-manager
	}
	if err != nil {
		h.t.Fatalf("create %s %s: %v", gvr.Resource, u.GetName(), err)
	}
}

// tenant makes namespace ns with a ServiceAccount sa whose Role grants
// verbs on resources, as a namespace's administrator would.
func (h *harness) tenant(ns, sa string, grants string) {
	h.t.Helper()
	h.namespace(ns)
	h.create(serviceAccounts, fmt.Sprintf("{apiVersion: v1, kind: ServiceAccount, metadata: {name: %s, namespace: %s}}", sa, ns))
	h.create(roles, fmt.Sprintf("{apiVersion: rbac.authorization.k8s.io/v1, kind: Role, metadata: {name: %s, namespace: %s}, rules: %s}", sa, ns, grants))
	h.create(roleBindings, fmt.Sprintf(`{apiVersion: rbac.authorization.k8s.io/v1, kind: RoleBinding, metadata: {name: %[1]s, namespace: %[2]s},
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: %[1]s},
  subjects: [{kind: ServiceAccount, name: %[1]s, namespace: %[2]s}]}`, sa, ns))
}

// teamRule parses a Rule object, a team's, as the loader of rule objects
// does (rules.ParseObject).
func teamRule(t *testing.T, src string) *rules.Rule {
	t.Helper()
	var content map[string]any
	if err := yaml.Unmarshal([]byte(src), &content); err != nil {
		t.Fatal(err)
	}
	r, err := rules.ParseObject(content)
	if err != nil {
		t.Fatalf("parse the Rule: %v", err)
	}
	return r
}

// Issue 38: a team's Rule acts as the ServiceAccount it names. Its
// ServiceAccount may patch configmaps but not deployments: the configmap
// patch goes through, and a ValidatingAdmissionPolicy that lets only that
// ServiceAccount change the ConfigMap (it refuses the test's own
// administrator) shows that the API server saw the ServiceAccount make
// it; the deployment patch, which kreact's own identity could make, is
// refused naming the ServiceAccount, the verb and the resource, and that
// is the failure the rule's observer (its logs and metrics) is told of.
// The load-time check reported the missing patch on deployments before
// any of it.
func TestTenantRuleActsAsItsServiceAccount(t *testing.T) {
	failures := &actionFailures{}
	h := start(t, engine.Options{Observer: failures, Identity: engine.Identity{DefaultServiceAccount: "default"}})
	const ns, sa = "tenant-acts", "deployer"
	user := engine.ServiceAccountUser(ns, sa)
	h.tenant(ns, sa, `[
  {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, patch]},
  {apiGroups: [apps], resources: [deployments], verbs: [get, list, watch]}]`)
	h.configMap(ns, "cfg", map[string]string{"guarded": "yes"}, nil)
	h.create(deployments, fmt.Sprintf(`{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: %s},
  spec: {selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: web}]}}}}`, ns))

	h.create(policies, fmt.Sprintf(`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicy, metadata: {name: %[1]s},
  spec: {failurePolicy: Fail,
    matchConstraints: {resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [UPDATE], resources: [configmaps]}]},
    validations: [{expression: "request.userInfo.username == '%[2]s'", message: "only %[2]s may change this ConfigMap"}]}}`, ns, user))
	h.create(policyBindings, fmt.Sprintf(`{apiVersion: admissionregistration.k8s.io/v1, kind: ValidatingAdmissionPolicyBinding, metadata: {name: %[1]s},
  spec: {policyName: %[1]s, validationActions: [Deny],
    matchResources: {namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: %[1]s}}, objectSelector: {matchLabels: {guarded: "yes"}}}}}`, ns))
	cms := h.client.Resource(configMaps).Namespace(ns)
	testcluster.Eventually(t, "the policy to refuse the administrator's changes to the ConfigMap", func() bool {
		_, err := cms.Patch(t.Context(), "cfg", types.MergePatchType, []byte(`{"metadata":{"annotations":{"probe":"admin"}}}`), metav1.PatchOptions{})
		return apierrors.IsInvalid(err) || apierrors.IsForbidden(err)
	})

	r := teamRule(t, fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: rollout, namespace: %s}
spec:
  serviceAccountName: %s
  watch: [{resource: configmaps}]
  reads: [deployments.apps]
  permissions:
    - {resources: [configmaps, deployments.apps], verbs: [patch]}
  script: |
    function onAdd(cm) {
      if (cm.metadata.name !== "cfg") return;
      kreact.patch(cm, {metadata: {labels: {seen: "yes"}}});
      const web = kreact.get("deployments.apps", cm.metadata.namespace, "web");
      kreact.patch(web, {metadata: {annotations: {restartedBy: "rollout"}}});
    }
`, ns, sa))
	if err := h.engine.Load(t.Context(), []*rules.Rule{r}); err != nil {
		t.Fatalf("load: %v", err)
	}
	var st engine.Status
	for _, s := range h.engine.Status() {
		if s.Rule == r.Name {
			st = s
		}
	}
	want := engine.Missing{Identity: user, Verb: "patch", Resource: "deployments.apps", Namespace: ns, What: "patch"}
	if !slices.Contains(st.Missing, want) {
		t.Errorf("Status.Missing = %v, want it to hold %v", st.Missing, want)
	}
	if slices.ContainsFunc(st.Missing, func(m engine.Missing) bool { return m.Resource == "configmaps" }) {
		t.Errorf("Status.Missing = %v: the ServiceAccount may do all it needs on configmaps", st.Missing)
	}
	if n := h.logs.Count(`msg="rule lacks permissions"`, "rule="+r.Name, "identity="+user, "patch deployments.apps in "+ns); n != 1 {
		t.Errorf("%d log lines report the missing permission, want 1", n)
	}

	testcluster.Eventually(t, "the rule's ConfigMap patch, made as its ServiceAccount", func() bool {
		v, ok := h.label(ns, "cfg", "seen")
		return ok && v == "yes"
	})
	testcluster.Eventually(t, "the deployment patch to fail", func() bool {
		return len(failures.list()) > 0
	})
	for _, f := range failures.list() {
		msg := f.Err.Error()
		if f.Action.Resource != deployments || !strings.Contains(msg, "patch deployments.apps "+ns+"/web as "+user) ||
			!strings.Contains(msg, `User "`+user+`" cannot patch resource "deployments"`) {
			t.Errorf("action failure %q: want only the deployment's patch, refused naming the ServiceAccount, verb and resource", msg)
		}
	}
	web, err := h.client.Resource(deployments).Namespace(ns).Get(t.Context(), "web", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := web.GetAnnotations()["restartedBy"]; ok {
		t.Error("the deployment was patched, which the rule's ServiceAccount may not do")
	}
}

// A team's Rule whose ServiceAccount may not read what the rule watches
// does not start: kreact's informers read with kreact's own identity, and
// the check at load is where the ServiceAccount's RBAC bounds them. The
// error names the ServiceAccount, the verb, the resource and the
// namespace. With --only-default-service-account, a Rule that names
// another ServiceAccount does not start either.
func TestTenantRuleThatItsServiceAccountMayNotReadIsRefused(t *testing.T) {
	h := start(t, engine.Options{Identity: engine.Identity{DefaultServiceAccount: "default", OnlyDefault: true}})
	const ns = "tenant-blind"
	h.tenant(ns, "default", `[{apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}]`)
	r := teamRule(t, fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: peek, namespace: %s}
spec:
  watch: [{resource: secrets}]
  script: |
    function onAdd(s) {}
`, ns))
	other := teamRule(t, fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: other, namespace: %s}
spec:
  serviceAccountName: admin
  watch: [{resource: configmaps}]
  script: |
    function onAdd(cm) {}
`, ns))
	err := h.engine.Load(t.Context(), []*rules.Rule{r, other})
	user := engine.ServiceAccountUser(ns, "default")
	for _, want := range []string{
		fmt.Sprintf("rule/%s/peek: %s may not list secrets in %s (watch): kreact reads for a Rule only what its ServiceAccount may read", ns, user, ns),
		fmt.Sprintf(`rule/%s/other: spec.serviceAccountName: "admin" refused: kreact run --only-default-service-account lets a Rule act only as "default"`, ns),
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load: %v; want an error containing %q", err, want)
		}
	}
	if st := h.engine.Status(); len(st) != 0 {
		t.Errorf("the refused rules have a status %+v; want none", st)
	}
}

// A team's Rule whose ServiceAccount kreact may not impersonate does not
// start, and the error says why: its permissions cannot be checked, and
// it would act as nothing else (the check fails closed). kreact runs here
// as a ServiceAccount with what its informers need and no impersonate.
func TestTenantRuleThatKreactMayNotImpersonateIsRefused(t *testing.T) {
	admin := &harness{t: t, client: dynamic.NewForConfigOrDie(cluster.Config())}
	const kreactNS, kreactSA, ns = "tenant-noimp-kreact", "kreact", "tenant-noimp"
	admin.namespace(kreactNS)
	admin.create(serviceAccounts, fmt.Sprintf("{apiVersion: v1, kind: ServiceAccount, metadata: {name: %s, namespace: %s}}", kreactSA, kreactNS))
	admin.create(clusterRoles, fmt.Sprintf(`{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRole, metadata: {name: %s}, rules: [
  {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [list, watch]},
  {apiGroups: [apiregistration.k8s.io], resources: [apiservices], verbs: [list, watch]},
  {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}]}`, kreactNS))
	admin.create(clusterRoleBindings, fmt.Sprintf(`{apiVersion: rbac.authorization.k8s.io/v1, kind: ClusterRoleBinding, metadata: {name: %[1]s},
  roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %[1]s},
  subjects: [{kind: ServiceAccount, name: %[2]s, namespace: %[1]s}]}`, kreactNS, kreactSA))
	admin.tenant(ns, "default", `[{apiGroups: [""], resources: [configmaps], verbs: [get, list, watch]}]`)

	expiry := int64(3600)
	tr, err := kubernetes.NewForConfigOrDie(cluster.Config()).CoreV1().ServiceAccounts(kreactNS).CreateToken(t.Context(), kreactSA,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := &rest.Config{Host: cluster.Config().Host, TLSClientConfig: rest.TLSClientConfig{CAData: cluster.Config().CAData}, BearerToken: tr.Status.Token}
	// The authorizer caches RBAC objects: wait until it knows the binding.
	testcluster.Eventually(t, "kreact's ServiceAccount to be allowed to list configmaps", func() bool {
		_, err := dynamic.NewForConfigOrDie(cfg).Resource(configMaps).List(t.Context(), metav1.ListOptions{Limit: 1})
		return err == nil
	})

	h := startAs(t, cfg, engine.Options{Identity: engine.Identity{DefaultServiceAccount: "default"}}, nil)
	r := teamRule(t, fmt.Sprintf(`apiVersion: kreact.dev/v1alpha1
kind: Rule
metadata: {name: watcher, namespace: %s}
spec:
  watch: [{resource: configmaps}]
  script: |
    function onAdd(cm) {}
`, ns))
	err = h.engine.Load(t.Context(), []*rules.Rule{r})
	user := engine.ServiceAccountUser(ns, "default")
	want := fmt.Sprintf("rule/%s/watcher: kreact may not act as %s: grant kreact impersonate on serviceaccounts (kreact rbac --rule-objects)", ns, user)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("load: %v; want an error containing %q", err, want)
	}
	// The log has the API server's own words.
	if n := h.logs.Count(`msg="kreact may not impersonate a Rule's ServiceAccount"`, "rule="+r.Name,
		fmt.Sprintf(`User \"system:serviceaccount:%s:%s\" cannot impersonate`, kreactNS, kreactSA)); n != 1 {
		t.Errorf("%d log lines say why kreact may not impersonate, want 1", n)
	}
	if st := h.engine.Status(); len(st) != 0 {
		t.Errorf("the refused rule has a status %+v; want none", st)
	}
}
