package engine

import (
	"cmp"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/transport"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/rules"
)

// Identity says whom the rules act as towards the API server. An
// administrator's rule (a rule file, a ClusterRule: rules.Rule.Namespace
// empty) acts as kreact itself. A team's Rule acts as a ServiceAccount of
// its own namespace, which kreact impersonates for every write the rule
// makes, so that the namespace's RBAC bounds the rule: never as kreact
// itself, whose rights are the union of every rule's. The zero value lets
// a Rule act as the ServiceAccount it names, or as its namespace's
// "default".
type Identity struct {
	// DefaultServiceAccount is the ServiceAccount of its namespace that a
	// Rule naming none (spec.serviceAccountName) acts as (kreact run
	// --default-service-account). Empty means "default", which every
	// namespace has and to which RBAC usually grants nothing.
	DefaultServiceAccount string
	// OnlyDefault refuses a Rule that names another ServiceAccount than
	// DefaultServiceAccount (kreact run --only-default-service-account):
	// the administrator, not the team, then chooses what bounds the
	// teams' rules.
	OnlyDefault bool
}

// ServiceAccount returns the ServiceAccount of its namespace that r acts
// as, "" for an administrator's rule (which acts as kreact itself), or an
// error, at the rule, when id refuses r.
func (id Identity) ServiceAccount(r *rules.Rule) (string, error) {
	if r.Namespace == "" {
		return "", nil
	}
	def := cmp.Or(id.DefaultServiceAccount, DefaultServiceAccount)
	switch sa := r.ServiceAccountName; {
	case sa == "":
		return def, nil
	case id.OnlyDefault && sa != def:
		var errs diag.ErrorList
		errs.Addf(diag.Position{Rule: r.Name, File: r.Source},
			"spec.serviceAccountName: %q refused: kreact run --only-default-service-account lets a Rule act only as %q, the default", sa, def)
		return "", errs
	default:
		return sa, nil
	}
}

// DefaultServiceAccount is the ServiceAccount a Rule that names none acts
// as, unless Identity.DefaultServiceAccount says otherwise.
const DefaultServiceAccount = "default"

// ServiceAccountUser is the user name of the ServiceAccount name in
// namespace, as the API server authenticates it (and as RBAC subjects,
// impersonation and audit logs name it).
func ServiceAccountUser(namespace, name string) string {
	return "system:serviceaccount:" + namespace + ":" + name
}

// impersonating is a rest.Interface whose every request impersonates
// user: what rest.Config.Impersonate does (transport.ImpersonateUserHeader;
// the API server adds a ServiceAccount's groups itself), but on the one
// client kreact shares, so that every rule's requests still share its
// connections and its client-side rate limit (--kube-api-qps) instead of
// each Rule getting a transport and a budget of its own. A base client
// that impersonates already (a kubeconfig's "as") is overridden: its
// transport leaves a request that names a user alone.
type impersonating struct {
	rest.Interface
	user string
}

var _ rest.Interface = impersonating{}

func (c impersonating) as(r *rest.Request) *rest.Request {
	return r.SetHeader(transport.ImpersonateUserHeader, c.user)
}

func (c impersonating) Verb(verb string) *rest.Request { return c.as(c.Interface.Verb(verb)) }
func (c impersonating) Post() *rest.Request            { return c.as(c.Interface.Post()) }
func (c impersonating) Put() *rest.Request             { return c.as(c.Interface.Put()) }
func (c impersonating) Get() *rest.Request             { return c.as(c.Interface.Get()) }
func (c impersonating) Delete() *rest.Request          { return c.as(c.Interface.Delete()) }
func (c impersonating) Patch(pt types.PatchType) *rest.Request {
	return c.as(c.Interface.Patch(pt))
}

// clientFor returns the client r's writes go through, and the user it
// impersonates ("" for kreact itself), or the error of Identity when r
// may not run.
func (e *Engine) clientFor(r *rules.Rule) (rest.Interface, string, error) {
	sa, err := e.opts.Identity.ServiceAccount(r)
	if err != nil || sa == "" {
		return e.client, "", err
	}
	user := ServiceAccountUser(r.Namespace, sa)
	return impersonating{Interface: e.client, user: user}, user, nil
}

// actingAs names the identity of user (clientFor) in logs and errors.
func actingAs(user string) string {
	if user == "" {
		return "kreact"
	}
	return user
}
