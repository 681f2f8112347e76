package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"

	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rbac"
	"github.com/kreact/kreact/rules"
)

// Missing is a permission that a rule needs and that the identity it acts
// as lacks, as the API server answered when the rule was checked
// (Status.Missing).
type Missing struct {
	// Identity is whom the API server was asked about: a ServiceAccount's
	// user name (system:serviceaccount:NAMESPACE:NAME) for a team's
	// Rule, "kreact" for an administrator's rule.
	Identity string
	// Verb is the API verb (get, list, watch, create, update, patch,
	// delete).
	Verb string
	// Resource is RESOURCE.GROUP, RESOURCE.GROUP/SUBRESOURCE for a
	// subresource ("deployments.apps", "configmaps").
	Resource string
	// Namespace is where; empty for all namespaces or a cluster-scoped
	// resource.
	Namespace string
	// What is what the rule needs it for (rbac.Access.What: "watch",
	// "read", "patch", "finalizer", "recordEvents"...).
	What string
}

// String reads "patch deployments.apps in team-a (patch)".
func (m Missing) String() string {
	where := "in all namespaces"
	if m.Namespace != "" {
		where = "in " + m.Namespace
	}
	return fmt.Sprintf("%s %s %s (%s)", m.Verb, m.Resource, where, m.What)
}

// reviewKey is one question to the API server.
type reviewKey struct {
	user, verb, namespace string
	gr                    schema.GroupResource
}

// reviewer asks the API server whether identities may do what rules
// need, each question once: the rules of one namespace mostly act as one
// ServiceAccount and need the same. One reviewer serves one Load (or one
// retry of the waiting rules), so that RBAC granted since is seen by the
// next; it is used under e.changing only.
type reviewer struct {
	answers map[reviewKey]bool
	// failed is the first review that failed: the rest of the load is
	// not held up by one timeout per rule while the API server is away.
	failed error
}

func newReviewer() *reviewer { return &reviewer{answers: map[reviewKey]bool{}} }

// allowed asks, through client (which impersonates user, or is kreact's
// own for ""), whether it may do verb on gr in namespace: a
// SelfSubjectAccessReview, which every authenticated identity may
// create. Sent as the impersonated ServiceAccount, it is answered for
// exactly the user and groups the rule's writes carry, and asks nothing
// of kreact's RBAC but the impersonation the writes need anyway.
func (rv *reviewer) allowed(ctx context.Context, client rest.Interface, user, verb string, gr schema.GroupResource, namespace string) (bool, error) {
	key := reviewKey{user: user, verb: verb, namespace: namespace, gr: gr}
	if ok, done := rv.answers[key]; done {
		return ok, nil
	}
	if rv.failed != nil {
		return false, rv.failed
	}
	resource, sub, _ := strings.Cut(gr.Resource, "/")
	body, err := json.Marshal(&authorizationv1.SelfSubjectAccessReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "authorization.k8s.io/v1", Kind: "SelfSubjectAccessReview"},
		Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
			Namespace: namespace, Verb: verb, Group: gr.Group, Resource: resource, Subresource: sub,
		}},
	})
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	res := client.Post().AbsPath("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews").
		SetHeader("Content-Type", "application/json").SetHeader("Accept", "application/json").Body(body).Do(ctx)
	// Error, not Raw's error: only Error decodes the API server's Status,
	// whose message says who may not do what.
	if err := res.Error(); err != nil {
		err = fmt.Errorf("ask the API server whether %s may %s %s: %w", actingAs(user), verb, gr, err)
		if !apierrors.IsForbidden(err) {
			rv.failed = err
		}
		return false, err
	}
	data, err := res.Raw()
	if err != nil {
		return false, err
	}
	var review authorizationv1.SelfSubjectAccessReview
	if err := json.Unmarshal(data, &review); err != nil {
		return false, fmt.Errorf("decode the access review: %w", err)
	}
	rv.answers[key] = review.Status.Allowed
	return review.Status.Allowed, nil
}

// checkAccess asks whether the identity rule r acts as may do all that it
// needs (rbac.Needs: what kreact rbac grants it), and returns what it may
// not. A team's Rule that may not read what it watches or reads (get,
// list, watch) is refused (the error): kreact's informers read with
// kreact's own identity, so this check is the one place where the
// ServiceAccount's RBAC bounds what the rule sees; a Rule whose
// permissions cannot be checked is refused as well. Anything else that is
// missing is reported, not refused: the API server refuses each such
// write when it is made, naming the ServiceAccount, and a grant made
// later works without a reload. An administrator's rule is never refused
// here; when its check fails, the failure is logged.
func (e *Engine) checkAccess(ctx context.Context, rv *reviewer, r *rules.Rule, res *rules.Resolved, plan []delivery.Informer) ([]Missing, error) {
	client, user, err := e.clientFor(r)
	if err != nil {
		return nil, err
	}
	at := diag.Position{Rule: r.Name, File: r.Source}
	var missing []Missing
	var refused diag.ErrorList
	for _, need := range rbac.Needs(res, plan) {
		for _, verb := range need.Verbs {
			ok, err := rv.allowed(ctx, client, user, verb, need.Resource, need.Namespace)
			if err != nil {
				if user == "" {
					e.log.Warn("rule's permissions not checked", "rule", r.Name, "identity", actingAs(user), "error", err)
					return missing, nil
				}
				if apierrors.IsForbidden(err) {
					// The API server's message is long (it names every way
					// impersonation could have been granted): logged whole,
					// and the error says what to do.
					e.log.Error("kreact may not impersonate a Rule's ServiceAccount", "rule", r.Name, "identity", user, "error", err)
					refused.Addf(at, "kreact may not act as %s: grant kreact impersonate on serviceaccounts (kreact rbac --rule-objects)", user)
				} else {
					refused.Addf(at, "permissions not checked: %v", err)
				}
				return missing, refused
			}
			if ok {
				continue
			}
			m := Missing{Identity: actingAs(user), Verb: verb, Resource: need.Resource.String(), Namespace: need.Namespace, What: need.What}
			if !slices.Contains(missing, m) {
				missing = append(missing, m)
			}
			if user != "" && need.Informer && slices.Contains([]string{"get", "list", "watch"}, verb) {
				refused.Addf(at, "%s may not %s: kreact reads for a Rule only what its ServiceAccount may read", user, m)
			}
		}
	}
	if len(missing) > 0 {
		list := make([]string, len(missing))
		for i, m := range missing {
			list[i] = m.String()
		}
		e.log.Warn("rule lacks permissions", "rule", r.Name, "identity", actingAs(user), "missing", strings.Join(list, "; "))
	}
	if len(refused) > 0 {
		return missing, refused
	}
	return missing, nil
}
