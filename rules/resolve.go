package rules

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/yamlnode"
)

// Resolver turns a resource reference as users write it ("deploy",
// "deployments.apps", "apps/v1 Deployment", a CRD's plural or short name)
// into the resource it names. The restmapper package implements it; its
// error should say what is wrong and suggest close names, since Resolve
// shows it to the user as it is.
type Resolver interface {
	Resolve(ref string) (apiresource.Resource, error)
}

// Resolved is a rule whose resource references have been resolved against
// a cluster's discovery. It is plain data, not changed after Resolve; any
// number of goroutines may call its methods.
type Resolved struct {
	// Rule is the rule that was resolved.
	Rule *Rule
	// Watch holds one entry per spec.watch entry, in order.
	Watch []ResolvedWatch
	// Reads are the resources of spec.reads, without duplicates. The
	// watched resources are readable too; see Readable.
	Reads []apiresource.Resource
	// Permissions are the verbs allowed per resource, and where, merged
	// from every entry of spec.permissions, in canonical verb order. They
	// are keyed by group and resource, not version: a permission on
	// deployments.apps covers every version of it, as in RBAC.
	Permissions map[schema.GroupResource][]Grant

	// resources holds the resource of each key of Permissions, as
	// resolved.
	resources map[schema.GroupResource]apiresource.Resource
}

// Namespaced reports whether gr, a resource of Permissions, is namespaced.
func (r *Resolved) Namespaced(gr schema.GroupResource) bool { return r.resources[gr].Namespaced }

// ConditionSubresource returns the subresource through which a condition
// on gr, a resource of Permissions, is read and written
// (actions.ConditionSubresource): "status", or "" for the object itself.
func (r *Resolved) ConditionSubresource(gr schema.GroupResource) string {
	return actions.ConditionSubresource(r.resources[gr])
}

// Grant is a verb a rule may use on a resource, and in which namespaces.
type Grant struct {
	Verb actions.Verb
	// Namespaces are where the verb applies, sorted; nil means all
	// namespaces (always so for a cluster-scoped resource).
	Namespaces []string
}

// Verbs returns the verbs granted on gr, in canonical order.
func (r *Resolved) Verbs(gr schema.GroupResource) []actions.Verb {
	var out []actions.Verb
	for _, g := range r.Permissions[gr] {
		out = append(out, g.Verb)
	}
	return out
}

// WatchedNamespaces returns the namespaces a permission that names none
// applies in: the union of the namespaces of the namespaced watch entries,
// sorted, when each of them names some; nil (all namespaces) when one
// watches all namespaces or none watches a namespaced resource.
func (r *Resolved) WatchedNamespaces() []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range r.Watch {
		if !w.Resource.Namespaced {
			continue
		}
		if len(w.Watch.Namespaces) == 0 {
			return nil
		}
		for _, ns := range w.Watch.Namespaces {
			if !seen[ns] {
				seen[ns] = true
				out = append(out, ns)
			}
		}
	}
	slices.Sort(out)
	return out
}

// ResolvedWatch is a watch entry and the resource it names.
type ResolvedWatch struct {
	Watch    Watch
	Resource apiresource.Resource
}

// Resolve resolves every resource reference of the rule with res and checks
// what needs to know the resource: namespaces only on namespaced resources,
// watched resources that can be listed and watched, permission verbs that
// the resource supports (when the resolver reports verbs), patch wherever
// condition applies on a resource without a status subresource (when the
// resolver reports verbs, and so describes the resource), and no two
// watch entries that would deliver the same change twice.
//
// The error, if any, is an ErrorList with a positioned error for every
// problem; the result is then nil. A reference that appears several times
// is resolved once.
func (r *Rule) Resolve(res Resolver) (*Resolved, error) {
	var errs diag.ErrorList
	type result struct {
		res apiresource.Resource
		err error
	}
	cache := make(map[string]result)
	resolve := func(ref string, pos diag.Position, path string) (apiresource.Resource, bool) {
		c, ok := cache[ref]
		if !ok {
			c.res, c.err = res.Resolve(ref)
			cache[ref] = c
		}
		if c.err != nil {
			errs.Addf(pos, "%s: %v", path, c.err)
			return apiresource.Resource{}, false
		}
		if r.Namespace != "" && !c.res.Namespaced {
			// A team's Rule (ParseObject) is confined to its namespace.
			errs.Addf(pos, "%s: %s is cluster-scoped, out of reach of a Rule in namespace %s (a ClusterRule may reach it)",
				path, c.res.GVR.GroupResource(), r.Namespace)
			return apiresource.Resource{}, false
		}
		return c.res, true
	}

	out := &Resolved{Rule: r, Permissions: make(map[schema.GroupResource][]Grant), resources: map[schema.GroupResource]apiresource.Resource{}}
	var watchIndex []int // the spec.watch index of each out.Watch
	seen := newWatchIndex()
	for i, w := range r.Watch {
		path := yamlnode.Index("spec.watch", i)
		rs, ok := resolve(w.Resource, w.Pos, path+".resource")
		if !ok {
			continue
		}
		gr := rs.GVR.GroupResource()
		if !rs.Namespaced && len(w.Namespaces) > 0 {
			pos := w.NamespacesPos
			if !pos.IsValid() {
				pos = w.Pos
			}
			errs.Addf(pos, "%s.namespaces: %s is cluster-scoped; leave namespaces out", path, gr)
		}
		if len(rs.Verbs) > 0 && (!slices.Contains(rs.Verbs, "list") || !slices.Contains(rs.Verbs, "watch")) {
			errs.Addf(w.Pos, "%s.resource: %s cannot be watched: the server does not allow list and watch on it", path, gr)
		}
		if j := seen.add(len(out.Watch), w, gr); j >= 0 {
			errs.Addf(w.Pos, "%s: watches the same objects as spec.watch[%d] (at %s); each change would be handled twice",
				path, watchIndex[j], out.Watch[j].Watch.Pos.LineCol())
		}
		out.Watch = append(out.Watch, ResolvedWatch{Watch: w, Resource: rs})
		watchIndex = append(watchIndex, i)
	}

	reads := map[schema.GroupVersionResource]bool{}
	for i, ref := range r.Reads {
		rs, ok := resolve(ref.Name, ref.Pos, yamlnode.Index("spec.reads", i))
		if ok && !reads[rs.GVR] {
			reads[rs.GVR] = true
			out.Reads = append(out.Reads, rs)
		}
	}

	watched := out.WatchedNamespaces()
	grants := grantSet{}
	// The first reference of each resource without a status subresource
	// that a permission grants condition on, where a missing patch is
	// reported.
	type place struct {
		pos  diag.Position
		path string
	}
	conditionAt := map[schema.GroupResource]place{}
	for i, p := range r.Permissions {
		path := yamlnode.Index("spec.permissions", i)
		namespaces := watched
		switch {
		case p.AllNamespaces:
			namespaces = nil
		case p.Namespaces != nil:
			namespaces = p.Namespaces
		}
		for j, ref := range p.Resources {
			rs, ok := resolve(ref.Name, ref.Pos, yamlnode.Index(path+".resources", j))
			if !ok {
				continue
			}
			gr := rs.GVR.GroupResource()
			if !rs.Namespaced && p.Namespaces != nil {
				errs.Addf(p.namespacesPos, "%s.namespaces: %s is cluster-scoped; give it a permission entry without namespaces",
					path, gr)
			}
			where := namespaces
			out.resources[gr] = rs
			if !rs.Namespaced {
				where = nil
			}
			for _, v := range p.Verbs {
				if need := v.RequestVerb(); need != "" && len(rs.Verbs) > 0 && !slices.Contains(rs.Verbs, need) {
					errs.Addf(ref.Pos, "%s: %s does not support %s (the server allows %s)",
						yamlnode.Index(path+".resources", j), gr, v, strings.Join(rs.Verbs, ", "))
				}
			}
			if _, seen := conditionAt[gr]; !seen && len(rs.Verbs) > 0 &&
				slices.Contains(p.Verbs, actions.SetCondition) && actions.ConditionSubresource(rs) == "" {
				conditionAt[gr] = place{ref.Pos, yamlnode.Index(path+".resources", j)}
			}
			grants.add(gr, p.Verbs, where)
		}
	}
	for gr, byVerb := range grants {
		out.Permissions[gr] = byVerb.grants()
	}
	for gr, at := range conditionAt {
		if missing := patchMissing(gr, out.Permissions[gr]); missing != "" {
			errs.Addf(at.pos, "%s: %s has no status subresource, so its conditions are written to the object itself, which takes patch %s",
				at.path, gr, missing)
		}
	}

	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	return out, nil
}

// watchIndex finds, for each watch entry in turn, the first earlier entry
// that would see the same objects: same resource (any version), same
// selectors, and namespaces in common (an entry without namespaces has all
// of them in common). It keeps, per resource and selectors, the first entry,
// the first entry without namespaces and the first entry naming each
// namespace, so that checking n entries costs the total of their
// namespaces, not n² comparisons.
type watchIndex map[watchKey]*watchGroup

type watchKey struct {
	gr             schema.GroupResource
	labels, fields string
}

type watchGroup struct {
	first int            // the first entry of the group
	all   int            // the first entry without namespaces, or -1
	byNS  map[string]int // the first entry naming each namespace
}

func newWatchIndex() watchIndex { return watchIndex{} }

// add records entry i, watch w of resource gr, and returns the first
// earlier entry it overlaps, or -1. Entries are added in increasing order
// of i; w.Namespaces holds no duplicates.
func (x watchIndex) add(i int, w Watch, gr schema.GroupResource) int {
	k := watchKey{gr, strings.TrimSpace(w.LabelSelector), strings.TrimSpace(w.FieldSelector)}
	g, ok := x[k]
	if !ok {
		g = &watchGroup{first: i, all: -1, byNS: map[string]int{}}
		x[k] = g
	}
	found := -1
	switch {
	case !ok:
	case len(w.Namespaces) == 0:
		found = g.first
	default:
		found = g.all
		for _, ns := range w.Namespaces {
			if j, ok := g.byNS[ns]; ok && (found < 0 || j < found) {
				found = j
			}
		}
	}
	if len(w.Namespaces) == 0 {
		if g.all < 0 {
			g.all = i
		}
	}
	for _, ns := range w.Namespaces {
		if _, ok := g.byNS[ns]; !ok {
			g.byNS[ns] = i
		}
	}
	return found
}

// patchMissing says what a rule must add so that patch applies on gr
// wherever condition does, as Permits requires of a resource without a
// status subresource, given gr's grants; "" when nothing.
func patchMissing(gr schema.GroupResource, gs []Grant) string {
	var condition, patch *Grant
	for i := range gs {
		switch gs[i].Verb {
		case actions.SetCondition:
			condition = &gs[i]
		case actions.Patch:
			patch = &gs[i]
		}
	}
	switch {
	case condition == nil || patch != nil && patch.Namespaces == nil:
		return ""
	case patch == nil:
		return diag.Sprintf("too: add {resources: [%s], verbs: [patch]} to spec.permissions", gr)
	case condition.Namespaces == nil:
		return diag.Sprintf("in all namespaces, where condition applies, not only in %s", strings.Join(patch.Namespaces, ", "))
	}
	var uncovered []string
	for _, ns := range condition.Namespaces {
		if !sortedContains(patch.Namespaces, ns) {
			uncovered = append(uncovered, ns)
		}
	}
	if len(uncovered) == 0 {
		return ""
	}
	return diag.Sprintf("in namespaces %s too, where condition applies", strings.Join(uncovered, ", "))
}

// grantSet collects the grants of every spec.permissions entry, per
// resource and verb, before they are merged: merging each entry into
// sorted lists as it comes would sort the namespaces gathered so far once
// per entry.
type grantSet map[schema.GroupResource]verbGrants

// verbGrants are the grants of one resource, per verb.
type verbGrants map[actions.Verb]*grantNamespaces

// grantNamespaces is where a verb is granted: all namespaces, or a set.
type grantNamespaces struct {
	all bool
	ns  map[string]struct{}
}

// add grants verbs on gr in namespaces (nil: all). A verb granted twice
// applies in the union of the namespaces.
func (s grantSet) add(gr schema.GroupResource, verbs []actions.Verb, namespaces []string) {
	byVerb := s[gr]
	if byVerb == nil {
		byVerb = verbGrants{}
		s[gr] = byVerb
	}
	for _, v := range verbs {
		g := byVerb[v]
		if g == nil {
			g = &grantNamespaces{ns: map[string]struct{}{}}
			byVerb[v] = g
		}
		if namespaces == nil {
			g.all = true
		}
		if g.all {
			g.ns = nil
			continue
		}
		for _, ns := range namespaces {
			g.ns[ns] = struct{}{}
		}
	}
}

// grants returns the verbs of one resource in canonical verb order, each
// with its namespaces sorted, or nil for all namespaces.
func (byVerb verbGrants) grants() []Grant {
	var out []Grant
	for _, v := range PermissionVerbs() {
		g := byVerb[v]
		switch {
		case g == nil:
		case g.all:
			out = append(out, Grant{Verb: v})
		default:
			ns := make([]string, 0, len(g.ns))
			for n := range g.ns {
				ns = append(ns, n)
			}
			slices.Sort(ns)
			out = append(out, Grant{Verb: v, Namespaces: ns})
		}
	}
	return out
}

// PermissionError is the error of a check that refuses an action, a read or
// an HTTP call because the rule did not declare it.
type PermissionError struct {
	// Rule is the rule's name.
	Rule string
	// Verb is the refused action verb, or "read".
	Verb string
	// Target is the resource ("deployments.apps") or URL.
	Target string
	// Field is the spec field that would allow it: "spec.permissions",
	// "spec.reads" or "spec.http".
	Field string
	// Namespace, for an action refused in this namespace only, is the
	// namespace; Namespaces are those the permission covers.
	Namespace  string
	Namespaces []string
}

// Error says what was refused and how to allow it, e.g. `rule "x" may not
// patch deployments.apps: add it to spec.permissions`.
func (e *PermissionError) Error() string {
	switch e.Field {
	case "spec.http":
		return diag.Sprintf("rule %q may not call %s: add a prefix of it to spec.http", e.Rule, e.Target)
	case "spec.permissions":
		if e.Namespaces != nil {
			ns := e.Namespace
			if ns == "" {
				ns = `""`
			}
			return diag.Sprintf("rule %q may not %s %s in namespace %s: its permission covers namespaces %s; add %s to spec.permissions[].namespaces",
				e.Rule, e.Verb, e.Target, ns, strings.Join(e.Namespaces, ", "), ns)
		}
		return diag.Sprintf("rule %q may not %s %s: add {resources: [%s], verbs: [%s]} to spec.permissions",
			e.Rule, e.Verb, e.Target, e.Target, e.Verb)
	}
	return diag.Sprintf("rule %q may not %s %s: add it to %s", e.Rule, e.Verb, e.Target, e.Field)
}

// Allows returns nil when the rule's permissions allow verb on the resource
// gvr (in any version) in namespace ("" for a cluster-scoped object), and
// a *PermissionError otherwise. For actions.Event, gvr and namespace are
// those of the object the Event is about. actions.HTTP is checked by URL
// with Rule.AllowsHTTP, never here.
func (r *Resolved) Allows(verb actions.Verb, gvr schema.GroupVersionResource, namespace string) error {
	if verb == actions.HTTP {
		return errors.New("rules: http actions are allowed by URL; use Rule.AllowsHTTP")
	}
	gr := gvr.GroupResource()
	i := slices.IndexFunc(r.Permissions[gr], func(g Grant) bool { return g.Verb == verb })
	if i < 0 {
		return &PermissionError{Rule: r.Rule.Name, Verb: string(verb), Target: gr.String(), Field: "spec.permissions"}
	}
	if g := r.Permissions[gr][i]; g.Namespaces != nil && !sortedContains(g.Namespaces, namespace) {
		return &PermissionError{Rule: r.Rule.Name, Verb: string(verb), Target: gr.String(), Field: "spec.permissions",
			Namespace: namespace, Namespaces: g.Namespaces}
	}
	return nil
}

func sortedContains(s []string, x string) bool {
	_, ok := slices.BinarySearch(s, x)
	return ok
}

// Permits returns nil when the rule may ask for action a: an HTTP request to
// a URL under spec.http, or a verb spec.permissions grants on the target's
// resource (a condition on a resource without a status subresource takes
// patch as well, which Resolve already requires of a resource it knows to
// have none). Both kreact run and kreact test check actions with it, so they
// refuse the same things with the same errors.
func (r *Resolved) Permits(a actions.Action) error {
	if a.Verb == actions.SetCondition && a.Subresource == "" {
		// The resource has no status subresource: the condition is
		// written to the object itself, which takes patch too.
		if err := r.Allows(a.Verb, a.Resource, a.Namespace); err != nil {
			return err
		}
		if err := r.Allows(actions.Patch, a.Resource, a.Namespace); err != nil {
			return fmt.Errorf("%s has no status subresource, so its conditions are written to the object itself: %w", a.Resource.GroupResource(), err)
		}
		return nil
	}
	if a.Verb != actions.HTTP {
		return r.Allows(a.Verb, a.Resource, a.Namespace)
	}
	if a.Request == nil {
		return diag.Errorf("rule %q: http action without a request", r.Rule.Name)
	}
	return r.Rule.AllowsHTTP(a.Request.URL)
}

// Readable returns nil when the rule's script may read the resource gvr (in
// any version) from the cache, because it is watched or listed in
// spec.reads, and a *PermissionError otherwise.
func (r *Resolved) Readable(gvr schema.GroupVersionResource) error {
	gr := gvr.GroupResource()
	same := func(x apiresource.Resource) bool { return x.GVR.GroupResource() == gr }
	if slices.ContainsFunc(r.Reads, same) ||
		slices.ContainsFunc(r.Watch, func(w ResolvedWatch) bool { return same(w.Resource) }) {
		return nil
	}
	return &PermissionError{Rule: r.Rule.Name, Verb: "read", Target: gr.String(), Field: "spec.reads"}
}

// AllowsHTTP returns nil when rawURL starts with one of the rule's
// spec.http prefixes, and an error otherwise (a *PermissionError when the
// URL is well-formed but not allowed).
//
// Prefixes match by URL, not by text: the scheme and host (with the
// default port made explicit) must be equal, and the path must be the
// prefix's path or lie below it: "http://h/hooks" allows "/hooks" and
// "/hooks/x" but not "/hooksx"; "http://h/hooks/" allows only paths below
// "/hooks/". URLs with credentials, with "." or ".." path segments, or
// with a path a server may read otherwise than Go does (a backslash, a
// "..;" segment, a control character, raw or percent-encoded) are
// refused. The query is not part of the match.
func (r *Rule) AllowsHTTP(rawURL string) error {
	u, err := url.Parse(rawURL)
	if err != nil {
		return diag.Errorf("rule %q: invalid URL %q: %w", r.Name, rawURL, err)
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https", u.Host == "":
		return diag.Errorf("rule %q: invalid URL %q: want an absolute http:// or https:// URL", r.Name, rawURL)
	case u.User != nil:
		return diag.Errorf("rule %q: invalid URL %q: credentials do not belong in the URL", r.Name, rawURL)
	case hasDotSegment(u.Path) || hasDotSegment(u.EscapedPath()):
		return diag.Errorf("rule %q: invalid URL %q: path has . or .. segments", r.Name, rawURL)
	}
	if why := ambiguousPath(u.Path); why != "" {
		return diag.Errorf("rule %q: invalid URL %q: path has %s, which some servers read as a path separator or the end of a name", r.Name, rawURL, why)
	}
	for _, s := range r.HTTP {
		p, err := parseHTTPPrefix(s)
		if err == nil && matchPrefix(p, u) {
			return nil
		}
	}
	return &PermissionError{Rule: r.Name, Verb: "call", Target: rawURL, Field: "spec.http"}
}

// ambiguousPath names what in the decoded path p a server could read
// differently from the prefix match: a backslash (a separator on Windows
// servers and many proxies), a segment that is "." or ".." once a ";param"
// suffix is dropped (Tomcat, Jetty), or a control character (NUL ends a
// name in C). It returns "" for a plain path.
func ambiguousPath(p string) string {
	if strings.Contains(p, `\`) {
		return "a backslash"
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return "a control character"
		}
	}
	for seg := range strings.SplitSeq(p, "/") {
		if i := strings.IndexByte(seg, ';'); i >= 0 {
			if s := seg[:i]; s == "." || s == ".." {
				return `a "` + seg + `" segment`
			}
		}
	}
	return ""
}

func matchPrefix(p, u *url.URL) bool {
	if !strings.EqualFold(p.Scheme, u.Scheme) || hostPort(p) != hostPort(u) {
		return false
	}
	pp, up := p.EscapedPath(), u.EscapedPath()
	switch {
	case pp == "" || pp == "/":
		return true
	case strings.HasSuffix(pp, "/"):
		return strings.HasPrefix(up, pp)
	}
	return up == pp || strings.HasPrefix(up, pp+"/")
}

func hostPort(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[strings.ToLower(u.Scheme)]
	}
	return strings.ToLower(u.Hostname()) + ":" + port
}
