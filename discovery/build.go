package discovery

import (
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kreact/kreact/apiresource"
)

// build turns one discovery answer into a snapshot in priority order (see
// Snapshot.Resources). Group versions in failed keep the resources they had
// in old, and keep their group's preferred version if it was theirs, so an
// aggregated API that is down changes nothing.
func build(groups []*metav1.APIGroup, lists []*metav1.APIResourceList, failed map[schema.GroupVersion]error, old *Snapshot) (*Snapshot, observed) {
	seen := observed{gvs: map[schema.GroupVersion]bool{}, grs: map[schema.GroupResource]bool{}}

	served := map[schema.GroupVersion]*metav1.APIResourceList{}
	for _, l := range lists {
		if l == nil {
			continue
		}
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil {
			continue
		}
		served[gv] = l
		for _, r := range l.APIResources {
			if !strings.Contains(r.Name, "/") {
				seen.grs[gv.WithResource(r.Name).GroupResource()] = true
			}
		}
	}

	type group struct {
		name      string
		preferred string
		versions  []string
	}
	var order []*group
	byName := map[string]*group{}
	groupNamed := func(name string) *group {
		g, ok := byName[name]
		if !ok {
			g = &group{name: name}
			byName[name] = g
			order = append(order, g)
		}
		return g
	}
	for _, ag := range groups {
		if ag == nil {
			continue
		}
		g := groupNamed(ag.Name)
		g.preferred = ag.PreferredVersion.Version
		for _, v := range ag.Versions {
			if !slices.Contains(g.versions, v.Version) {
				g.versions = append(g.versions, v.Version)
			}
			seen.gvs[schema.GroupVersion{Group: ag.Name, Version: v.Version}] = true
		}
	}

	kept := map[schema.GroupVersion][]apiresource.Resource{}
	for _, r := range old.Resources {
		gv := r.GVR.GroupVersion()
		if _, ok := failed[gv]; !ok {
			continue
		}
		kept[gv] = append(kept[gv], r)
		seen.grs[r.GVR.GroupResource()] = true
		g := groupNamed(gv.Group)
		if !slices.Contains(g.versions, gv.Version) {
			g.versions = append(g.versions, gv.Version)
		}
		if r.Preferred || g.preferred == "" {
			g.preferred = gv.Version
		}
	}
	for gv := range failed {
		seen.gvs[gv] = true
	}

	next := &Snapshot{}
	done := map[schema.GroupVersionResource]bool{}
	for _, g := range order {
		versions := g.versions
		if i := slices.Index(versions, g.preferred); i > 0 {
			versions = slices.Concat([]string{g.preferred}, versions[:i], versions[i+1:])
		}
		for _, v := range versions {
			gv := schema.GroupVersion{Group: g.name, Version: v}
			preferred := v == g.preferred
			if rs, ok := kept[gv]; ok {
				for _, r := range rs {
					r.Preferred = preferred
					next.Resources = append(next.Resources, r)
				}
				continue
			}
			l := served[gv]
			if l == nil {
				continue
			}
			subs := subresources(l)
			for _, ar := range l.APIResources {
				r, ok := resource(gv, ar, preferred)
				if !ok || done[r.GVR] {
					continue
				}
				r.Subresources = subs[ar.Name]
				done[r.GVR] = true
				next.Resources = append(next.Resources, r)
			}
		}
	}
	return next, seen
}

// subresources maps each resource of l to its subresources, sorted:
// discovery lists them as resources of their own named "RESOURCE/SUB".
func subresources(l *metav1.APIResourceList) map[string][]string {
	out := map[string][]string{}
	for _, ar := range l.APIResources {
		if parent, sub, ok := strings.Cut(ar.Name, "/"); ok && parent != "" && sub != "" && !slices.Contains(out[parent], sub) {
			out[parent] = append(out[parent], sub)
		}
	}
	for _, subs := range out {
		slices.Sort(subs)
	}
	return out
}

// resource converts one discovered resource, or says it is not one kreact
// can watch: a subresource, or a resource without list and watch.
func resource(gv schema.GroupVersion, ar metav1.APIResource, preferred bool) (apiresource.Resource, bool) {
	if ar.Name == "" || strings.Contains(ar.Name, "/") ||
		!slices.Contains(ar.Verbs, "list") || !slices.Contains(ar.Verbs, "watch") {
		return apiresource.Resource{}, false
	}
	singular := ar.SingularName
	if singular == "" {
		singular = strings.ToLower(ar.Kind)
	}
	return apiresource.Resource{
		GVR:        gv.WithResource(ar.Name),
		Kind:       ar.Kind,
		Singular:   singular,
		Namespaced: ar.Namespaced,
		ShortNames: slices.Clone(ar.ShortNames),
		Categories: slices.Clone(ar.Categories),
		Verbs:      slices.Clone([]string(ar.Verbs)),
		Preferred:  preferred,
	}, true
}
