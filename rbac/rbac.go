package rbac

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/delivery"
	"github.com/kreact/kreact/rules"
	"github.com/kreact/kreact/scripting"
)

// Options say whom the RBAC is for and what else kreact runs with.
type Options struct {
	// Name names the ServiceAccount, roles and bindings; Namespace is the
	// ServiceAccount's (and the Leases') namespace. Both are required.
	Name, Namespace string
	// LeaderElect adds a Role for leader election's Lease in Namespace.
	LeaderElect bool
	// Shards adds a Role for the shard group's Leases in Namespace.
	Shards bool
	// OmitNamespace leaves the Namespace object out of the output, for
	// manifests that create it elsewhere; false prints it first.
	OmitNamespace bool
	// Admission names the rules whose scripts have admission handlers
	// (onValidate, onMutate): kreact run then applies and deletes the
	// webhook configurations that call them (package admission).
	Admission []string
	// RuleObjects grants what kreact run --rule-objects needs: to watch
	// the Rule and ClusterRule objects and write their status, and to
	// impersonate the ServiceAccounts that teams' Rules act as.
	RuleObjects bool
	// AdmissionCASecret, with Admission, is the Secret in Namespace that
	// keeps the CA of the generated admission certificates (kreact run
	// --admission-ca-secret).
	AdmissionCASecret string
}

// Write is kreact rbac: the warnings of the rules whose actions reach
// wide (WideActions) on stderr, and what Generate makes of rs on stdout.
func Write(stdout, stderr io.Writer, rs []*rules.Rule, resolved []*rules.Resolved, opts Options) error {
	for _, w := range WideActions(resolved...) {
		fmt.Fprintln(stderr, w)
	}
	out, err := Generate(rs, resolved, opts)
	if err != nil {
		return err
	}
	_, err = stdout.Write(out)
	return err
}

// Generate returns, as YAML documents, the least-privilege RBAC that
// kreact needs to run rs, whose resolved forms are resolved (a rule that
// does not resolve has no place in the output): kreact's Namespace
// (unless opts.OmitNamespace), a ServiceAccount in it, a ClusterRole and its binding, a Role and
// RoleBinding per namespace where access is limited to named namespaces,
// and the Lease roles that opts ask for. Each policy rule has a comment naming who needs it for what.
func Generate(rs []*rules.Rule, resolved []*rules.Resolved, opts Options) ([]byte, error) {
	cluster, namespaced := rbacFor(resolved)
	for _, name := range opts.Admission {
		// Server-side apply of an object that may not exist needs create
		// as well as patch.
		for _, gr := range []schema.GroupResource{validatingConfigsGR, mutatingConfigsGR} {
			cluster.add(gr, "rule "+name, "admission webhooks", "create", "patch", "delete")
		}
	}
	if opts.RuleObjects {
		for _, plural := range []string{"rules", "clusterrules"} {
			cluster.add(schema.GroupResource{Group: rules.Group, Resource: plural}, "kreact", "rule objects", "list", "watch")
			cluster.add(schema.GroupResource{Group: rules.Group, Resource: plural + "/status"}, "kreact", "rule objects' status", "patch")
		}
	}
	if opts.RuleObjects || slices.ContainsFunc(rs, func(r *rules.Rule) bool { return r.Namespace != "" }) {
		// A team's Rule acts as a ServiceAccount of its namespace
		// (engine.Identity), in whichever namespace Rules appear.
		cluster.add(serviceAccountsGR, "kreact", "teams' Rules act as a ServiceAccount of their namespace", "impersonate")
	}
	if len(opts.Admission) > 0 && opts.AdmissionCASecret != "" {
		in(namespaced, opts.Namespace).add(secretsGR, "kreact", "admission CA secret "+opts.AdmissionCASecret, "get", "create")
	}
	if opts.LeaderElect || opts.Shards {
		// render writes the Lease roles as it walks the namespaces:
		// opts.Namespace must be among them.
		in(namespaced, opts.Namespace)
	}
	return render(opts, rs, cluster, namespaced)
}

// rbacVerbOrder is the order verbs are printed in, kubectl's.
var rbacVerbOrder = []string{"get", "list", "watch", "create", "update", "patch", "delete", "impersonate"}

// grant is what one resource needs, in the cluster or in one namespace,
// and why.
type grant struct {
	gr    schema.GroupResource
	verbs map[string]bool
	// why maps a reason ("rule x", "kreact") to what it does.
	why map[string]map[string]bool
}

// grants is a set of grants keyed by resource.
type grants map[schema.GroupResource]*grant

// in returns the grants of namespace ns, made empty if there were none.
func in(namespaced map[string]grants, ns string) grants {
	if namespaced[ns] == nil {
		namespaced[ns] = grants{}
	}
	return namespaced[ns]
}

func (g grants) add(gr schema.GroupResource, who, what string, verbs ...string) {
	x, ok := g[gr]
	if !ok {
		x = &grant{gr: gr, verbs: map[string]bool{}, why: map[string]map[string]bool{}}
		g[gr] = x
	}
	for _, v := range verbs {
		x.verbs[v] = true
	}
	if x.why[who] == nil {
		x.why[who] = map[string]bool{}
	}
	x.why[who][what] = true
}

// Scripts target subresources with an option of kreact.apply, kreact.patch
// and kreact.jsonPatch: {subresource: "status"} or {subresource: "scale"}.
// A rule's declared patch or apply covers the subresources (the rule format
// has no separate permission for them), so a rule gets patch on
// RESOURCE/SUB for every resource it may patch (or apply), for each
// subresource its script names in a kreact.patch or kreact.jsonPatch call
// (or a kreact.apply call). The test is textual: a literal subresource:
// "status" inside the parentheses of such a call names status for that
// call's verb; a literal outside any call (an options object built apart)
// names it for both; a script that mentions subresource otherwise (an
// option built at run time) gets every subresource kreact supports for
// both; a comment that mentions it grants a little more than needed.
// Which resources have which subresources is not known offline, so the
// grant covers every resource the rule may patch (or apply): on one without
// that subresource (configmaps/status) it is inert, as RBAC on a path that
// does not exist allows nothing.
var (
	subresourceLiteral  = regexp.MustCompile(`\bsubresource\s*:\s*["'\x60](\w+)["'\x60]`)
	subresourceCall     = regexp.MustCompile(`\bkreact\s*\.\s*(apply|patch|jsonPatch)\s*\(`)
	mentionsSubresource = regexp.MustCompile(`\bsubresource\b`)
	allSubresources     = []string{"scale", "status"}
	subresourceVerbs    = []actions.Verb{actions.Apply, actions.Patch}
)

// subresourcesOf returns the subresources a script may target, sorted,
// per action verb (apply, patch).
func subresourcesOf(script string) map[actions.Verb][]string {
	out := map[actions.Verb][]string{}
	addSub := func(v actions.Verb, sub string) {
		if !slices.Contains(out[v], sub) {
			out[v] = append(out[v], sub)
		}
	}
	calls := subresourceCall.FindAllStringSubmatchIndex(script, -1)
	found := false
	for _, m := range subresourceLiteral.FindAllStringSubmatchIndex(script, -1) {
		sub := script[m[2]:m[3]]
		if !slices.Contains(allSubresources, sub) {
			continue
		}
		found = true
		verbs := subresourceVerbs
		if v, ok := enclosingCall(script, calls, m[0]); ok {
			verbs = []actions.Verb{v}
		}
		for _, v := range verbs {
			addSub(v, sub)
		}
	}
	if !found && mentionsSubresource.MatchString(script) {
		for _, v := range subresourceVerbs {
			out[v] = slices.Clone(allSubresources)
		}
	}
	for _, subs := range out {
		slices.Sort(subs)
	}
	return out
}

// enclosingCall returns the verb of the innermost kreact.apply, patch or
// jsonPatch call (of calls, subresourceCall's matches) whose parentheses
// hold offset at in script, counting parentheses only.
func enclosingCall(script string, calls [][]int, at int) (actions.Verb, bool) {
	for i := len(calls) - 1; i >= 0; i-- {
		c := calls[i]
		if c[1] > at {
			continue
		}
		depth := 1
		for _, r := range script[c[1]:at] {
			switch r {
			case '(':
				depth++
			case ')':
				depth--
			}
			if depth == 0 {
				break
			}
		}
		if depth > 0 {
			if script[c[2]:c[3]] == "apply" {
				return actions.Apply, true
			}
			return actions.Patch, true
		}
	}
	return "", false
}

// A script that sets options.owner (kreact.create, kreact.apply) asks for
// an owner reference with blockOwnerDeletion, which the API server's
// OwnerReferencesPermissionEnforcement admission plugin (off by default,
// on in OpenShift and in many hardened clusters) allows only to whom may
// update the owner's finalizers subresource. The owner is an object the
// rule read (the script refuses one without a uid), so a rule whose
// script may set owner gets update on RESOURCE/finalizers of every
// resource it watches or reads, where it reads it. The test is textual,
// like the subresources': owner as a key of an object literal ({owner:
// obj}, {owner}) or assigned as a property (opts.owner = obj), a comment
// too; reading a field named owner (labels.owner, kreact.owner(obj)) is
// not.
var ownerOption = regexp.MustCompile(`[{,]\s*owner\s*[:,}]|\.owner\s*=[^=]|\[\s*["'\x60]owner["'\x60]\s*\]\s*=[^=]`)

// setsOwner reports whether a script may set options.owner.
func setsOwner(script string) bool { return ownerOption.MatchString(script) }

var (
	eventsGR      = schema.GroupResource{Resource: "events"}
	crdsGR        = schema.GroupResource{Group: "apiextensions.k8s.io", Resource: "customresourcedefinitions"}
	apiServicesGR = schema.GroupResource{Group: "apiregistration.k8s.io", Resource: "apiservices"}
	leasesGR      = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
	secretsGR     = schema.GroupResource{Resource: "secrets"}

	serviceAccountsGR = schema.GroupResource{Resource: "serviceaccounts"}

	validatingConfigsGR = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}
	mutatingConfigsGR   = schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}
)

// rbacFor computes what a rule set needs: cluster-wide grants, and grants
// per namespace for resources that every watch limits to namespaces and
// for permissions that apply in named namespaces.
func rbacFor(rs []*rules.Resolved) (cluster grants, namespaced map[string]grants) {
	cluster, namespaced = grants{}, map[string]grants{}
	// kreact itself: discovery refreshes when CRDs or APIServices change
	// (metadata informers: list and watch).
	cluster.add(crdsGR, "kreact", "discovery", "list", "watch")
	cluster.add(apiServicesGR, "kreact", "discovery", "list", "watch")

	// Informers: those of delivery.Plan, exactly as kreact run starts them.
	// A resource is read cluster-wide when some informer lists it in all
	// namespaces (a grant per namespace would add nothing); otherwise only
	// in the namespaces its informers name.
	plans := make([][]delivery.Informer, len(rs))
	allNamespaces := map[schema.GroupResource]bool{}
	for i, r := range rs {
		var opts delivery.PlanOptions
		if prog, err := scripting.CompileRule(r.Rule); err == nil {
			// As kreact run plans it: an admission-only rule watches nothing.
			opts.Handlers = prog
		}
		plans[i] = delivery.PlanWith(r, opts)
		for _, inf := range plans[i] {
			if inf.Key.Namespace == "" {
				allNamespaces[inf.Key.GVR.GroupResource()] = true
			}
		}
	}
	for i, r := range rs {
		who := "rule " + r.Rule.Name
		for _, a := range Needs(r, plans[i]) {
			if r.Rule.Namespace != "" && !kreactsOwn(a) {
				// A team's Rule writes as its ServiceAccount: what it
				// writes is the namespace's to grant that account.
				continue
			}
			where := cluster
			switch base, _, _ := strings.Cut(a.Resource.Resource, "/"); {
			case a.Informer && !allNamespaces[schema.GroupResource{Group: a.Resource.Group, Resource: base}]:
				where = in(namespaced, a.Namespace)
			case !a.Informer && a.Namespace != "":
				where = in(namespaced, a.Namespace)
			}
			where.add(a.Resource, who, a.What, a.Verbs...)
		}
	}
	return cluster, namespaced
}

// Access is one thing a rule needs of the API server: Verbs on Resource
// in Namespace.
type Access struct {
	// Resource is the resource, "RESOURCE/SUBRESOURCE" for a subresource.
	Resource schema.GroupResource
	// Namespace is where: empty for all namespaces, or a cluster-scoped
	// resource.
	Namespace string
	// Verbs are the API verbs (RBAC's: get, list, watch, create, update,
	// patch, delete).
	Verbs []string
	// What says what for: "watch", "read", "patch", "finalizer",
	// "recordEvents"...
	What string
	// Informer is true for what an informer of the rule's plan needs (the
	// reads of a watch or spec.reads, and what follows from them: the
	// finalizer, owner references), which kreact makes with its own
	// identity; false for what the rule's actions need.
	Informer bool
}

// kreactsOwn reports whether kreact does a of a team's Rule with its own
// identity: the reads of the informers it shares between rules, and the
// release of the rule's finalizers when the rule goes (so that no object
// is left undeletable whatever its ServiceAccount may do). Everything
// else such a rule does, it does as its ServiceAccount.
func kreactsOwn(a Access) bool {
	return a.Informer && (a.What == "read" || a.What == "watch" || a.What == "watch, finalizer")
}

// Needs returns what the rule res, whose informers are plan (delivery.Plan
// or PlanWith), needs of the API server, one Access per resource,
// namespace and purpose: what Generate grants it, before Generate merges
// the rules' needs into roles (and grants a resource cluster-wide when
// any rule lists it in all namespaces).
func Needs(res *rules.Resolved, plan []delivery.Informer) []Access {
	var out []Access
	r := res.Rule
	owns := setsOwner(r.Script)
	readVerbs := []string{"get", "list", "watch"}
	for _, inf := range plan {
		gr, ns, what := inf.Key.GVR.GroupResource(), inf.Key.Namespace, "read"
		if inf.Handled {
			what = "watch"
		}
		verbs := readVerbs
		if inf.Handled && r.Finalizer {
			// spec.finalizer: kreact patches its finalizer in and out
			// of the objects it watches.
			what, verbs = "watch, finalizer", []string{"get", "list", "watch", "patch"}
		}
		out = append(out, Access{Resource: gr, Namespace: ns, Verbs: verbs, What: what, Informer: true})
		if owns {
			out = append(out, Access{Resource: schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/finalizers"}, Namespace: ns, Verbs: []string{"update"}, What: "owner references", Informer: true})
		}
		if inf.Handled && r.RecordEvents {
			// spec.recordEvents: kreact records Events about the
			// objects the rule watches, in their namespace.
			out = append(out, Access{Resource: eventsGR, Namespace: ns, Verbs: []string{"create"}, What: "recordEvents"})
		}
	}

	// Actions: in all namespaces for a grant in all of them (or on a
	// cluster-scoped resource), else in each namespace it names, as
	// kreact's own check (rules.Resolved.Allows) allows them.
	subs := subresourcesOf(r.Script)
	for _, gr := range slices.SortedFunc(maps.Keys(res.Permissions), func(a, b schema.GroupResource) int {
		return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
	}) {
		for _, g := range res.Permissions[gr] {
			add := func(gr schema.GroupResource, what string, verbs ...string) {
				if g.Namespaces == nil {
					out = append(out, Access{Resource: gr, Verbs: verbs, What: what})
					return
				}
				for _, ns := range g.Namespaces {
					out = append(out, Access{Resource: gr, Namespace: ns, Verbs: verbs, What: what})
				}
			}
			v := g.Verb
			if v == actions.Event {
				// The Event goes to the namespace of the object it is
				// about.
				add(eventsGR, "event", "create")
				continue
			}
			if v == actions.SetCondition {
				// Read and patched through the status subresource, or
				// the object itself where the resource has none.
				at := gr
				if sub := res.ConditionSubresource(gr); sub != "" {
					at = schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/" + sub}
				}
				add(at, "condition", v.APIVerbs()...)
				continue
			}
			add(gr, string(v), v.APIVerbs()...)
			if v == actions.Patch || v == actions.Apply {
				for _, sub := range subs[v] {
					add(schema.GroupResource{Group: gr.Group, Resource: gr.Resource + "/" + sub}, string(v)+" "+sub, "patch")
				}
			}
		}
	}
	return out
}

// WideActions points out what the rules of resolved that watch only some
// namespaces may do in all of them: one line per rule and resource.
func WideActions(resolved ...*rules.Resolved) []string {
	var out []string
	for _, res := range resolved {
		if !slices.ContainsFunc(res.Watch, func(w rules.ResolvedWatch) bool { return len(w.Watch.Namespaces) > 0 }) {
			continue
		}
		for _, gr := range slices.SortedFunc(maps.Keys(res.Permissions), func(a, b schema.GroupResource) int {
			return cmp.Or(cmp.Compare(a.Group, b.Group), cmp.Compare(a.Resource, b.Resource))
		}) {
			var verbs []string
			for _, g := range res.Permissions[gr] {
				if g.Namespaces == nil && res.Namespaced(gr) {
					verbs = append(verbs, string(g.Verb))
				}
			}
			if len(verbs) > 0 {
				out = append(out, fmt.Sprintf("warning: rule=%s watches only some namespaces but may %s %s in all namespaces; spec.permissions[].namespaces narrows it",
					res.Rule.Name, strings.Join(verbs, ", "), gr))
			}
		}
	}
	return out
}

// render prints the objects, each resource's rule with a comment
// saying which rules need it.
func render(f Options, rs []*rules.Rule, cluster grants, namespaced map[string]grants) ([]byte, error) {
	names := make([]string, len(rs))
	for i, r := range rs {
		names[i] = r.Name
	}
	slices.Sort(names)
	subject := seq(false, mapping("kind", "ServiceAccount", "name", f.Name, "namespace", f.Namespace))
	var docs []*yaml.Node

	// The Namespace comes first, so that `kubectl apply -f -` of the
	// output does not stop at the ServiceAccount when it does not exist
	// yet; applying it again changes nothing.
	nsObj := mapping("apiVersion", "v1", "kind", "Namespace", "metadata", mapping("name", f.Namespace))
	noun := "rules"
	if len(rs) == 1 {
		noun = "rule"
	}
	what := fmt.Sprintf("%d %s: %s", len(rs), noun, strings.Join(names, ", "))
	switch {
	case f.RuleObjects && len(rs) == 0:
		what = "rule objects"
	case f.RuleObjects:
		what += ", and rule objects"
	}
	nsObj.HeadComment = fmt.Sprintf("Generated by `kreact rbac` for %s.\n"+
		"Grants what the rules declare (spec.watch, spec.reads, spec.permissions)\n"+
		"and what kreact itself needs, nothing more; regenerate it when rules change.", what)
	sa := mapping("apiVersion", "v1", "kind", "ServiceAccount", "metadata", mapping("name", f.Name, "namespace", f.Namespace))
	if f.OmitNamespace {
		sa.HeadComment, nsObj.HeadComment = nsObj.HeadComment, ""
	} else {
		docs = append(docs, nsObj)
	}
	docs = append(docs, sa)

	docs = append(docs,
		mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "ClusterRole",
			"metadata", mapping("name", f.Name), "rules", policyRules(cluster)),
		mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "ClusterRoleBinding",
			"metadata", mapping("name", f.Name),
			"roleRef", mapping("apiGroup", "rbac.authorization.k8s.io", "kind", "ClusterRole", "name", f.Name),
			"subjects", subject))

	for _, ns := range slices.Sorted(maps.Keys(namespaced)) {
		g := namespaced[ns]
		if len(g) > 0 {
			role := mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "Role",
				"metadata", mapping("name", f.Name, "namespace", ns), "rules", policyRules(g))
			role.HeadComment = fmt.Sprintf("What rules watch or may do only in named namespaces: %s.", ns)
			docs = append(docs, role,
				mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "RoleBinding",
					"metadata", mapping("name", f.Name, "namespace", ns),
					"roleRef", mapping("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", f.Name),
					"subjects", subject))
		}
		if f.LeaderElect && ns == f.Namespace {
			name := f.Name + "-leader-election"
			lease := grants{}
			lease.add(leasesGR, "kreact", "leader election", "get", "create", "update")
			role := mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "Role",
				"metadata", mapping("name", name, "namespace", ns), "rules", policyRules(lease))
			role.HeadComment = "Leader election (--leader-elect): the Lease in kreact's namespace."
			docs = append(docs, role,
				mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "RoleBinding",
					"metadata", mapping("name", name, "namespace", ns),
					"roleRef", mapping("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", name),
					"subjects", subject))
		}
		if f.Shards && ns == f.Namespace {
			name := f.Name + "-shards"
			lease := grants{}
			lease.add(leasesGR, "kreact", "shard membership", "get", "list", "create", "update", "delete")
			role := mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "Role",
				"metadata", mapping("name", name, "namespace", ns), "rules", policyRules(lease))
			role.HeadComment = "Sharding (--shards): each replica's Lease in kreact's namespace, and the\n" +
				"group's Leases, listed to find the live members; a Lease left by a\n" +
				"replica that died is deleted once long expired."
			docs = append(docs, role,
				mapping("apiVersion", "rbac.authorization.k8s.io/v1", "kind", "RoleBinding",
					"metadata", mapping("name", name, "namespace", ns),
					"roleRef", mapping("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", name),
					"subjects", subject))
		}
	}

	var b bytes.Buffer
	for i, d := range docs {
		if i > 0 {
			b.WriteString("---\n")
		}
		enc := yaml.NewEncoder(&b)
		enc.SetIndent(2)
		if err := enc.Encode(d); err != nil {
			return nil, err
		}
		if err := enc.Close(); err != nil {
			return nil, err
		}
	}
	return b.Bytes(), nil
}

// policyRules returns one PolicyRule per resource, sorted by API group and
// resource, each with a comment naming who needs it for what.
func policyRules(g grants) *yaml.Node {
	list := slices.Collect(maps.Values(g))
	slices.SortFunc(list, func(a, b *grant) int {
		return cmp.Or(cmp.Compare(a.gr.Group, b.gr.Group), cmp.Compare(a.gr.Resource, b.gr.Resource))
	})
	out := seq(false)
	for _, x := range list {
		var verbs []string
		for _, v := range rbacVerbOrder {
			if x.verbs[v] {
				verbs = append(verbs, v)
			}
		}
		var why []string
		for _, who := range slices.Sorted(maps.Keys(x.why)) {
			why = append(why, fmt.Sprintf("%s (%s)", who, strings.Join(slices.Sorted(maps.Keys(x.why[who])), ", ")))
		}
		rule := mapping("apiGroups", seq(true, x.gr.Group), "resources", seq(true, x.gr.Resource), "verbs", strs(verbs))
		rule.HeadComment = strings.Join(why, ", ")
		out.Content = append(out.Content, rule)
	}
	return out
}

// strs builds a flow sequence of strings.
func strs(ss []string) *yaml.Node {
	s := seq(true)
	for _, x := range ss {
		s.Content = append(s.Content, scalar(x))
	}
	return s
}

// mapping builds a YAML mapping from keys and values (strings or nodes).
func mapping(kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
	for i := 0; i+1 < len(kv); i += 2 {
		m.Content = append(m.Content, scalar(kv[i].(string)), value(kv[i+1]))
	}
	return m
}

func value(v any) *yaml.Node {
	switch v := v.(type) {
	case *yaml.Node:
		return v
	case string:
		return scalar(v)
	}
	panic(fmt.Sprintf("rbac: unexpected %T", v))
}

func scalar(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

// seq builds a sequence of strings or nodes, in flow style ([a, b]) when
// flow is true.
func seq(flow bool, items ...any) *yaml.Node {
	s := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if flow {
		s.Style = yaml.FlowStyle
	}
	for _, it := range items {
		s.Content = append(s.Content, value(it))
	}
	return s
}
