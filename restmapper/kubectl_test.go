package restmapper_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	cgdiscovery "k8s.io/client-go/discovery"
	cgrestmapper "k8s.io/client-go/restmapper"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/restmapper"
)

// listsDiscovery serves fixed resource lists in a fixed order to
// client-go's shortcut expander.
type listsDiscovery struct {
	cgdiscovery.DiscoveryInterface
	lists []*metav1.APIResourceList
}

func (d listsDiscovery) ServerGroupsAndResources() ([]*metav1.APIGroup, []*metav1.APIResourceList, error) {
	return nil, d.lists, nil
}

// kubectlMapper builds the RESTMapper kubectl builds from discovery:
// client-go's priority mapper under its shortcut expander.
func kubectlMapper(rs []apiresource.Resource) meta.RESTMapper {
	var groups []*cgrestmapper.APIGroupResources
	var lists []*metav1.APIResourceList
	for _, r := range rs {
		gv := r.GVR.GroupVersion()
		i := slices.IndexFunc(groups, func(g *cgrestmapper.APIGroupResources) bool { return g.Group.Name == gv.Group })
		if i < 0 {
			groups = append(groups, &cgrestmapper.APIGroupResources{
				Group:              metav1.APIGroup{Name: gv.Group},
				VersionedResources: map[string][]metav1.APIResource{},
			})
			i = len(groups) - 1
		}
		g := groups[i]
		if _, ok := g.VersionedResources[gv.Version]; !ok {
			v := metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
			g.Group.Versions = append(g.Group.Versions, v)
			lists = append(lists, &metav1.APIResourceList{GroupVersion: gv.String()})
		}
		if r.Preferred {
			g.Group.PreferredVersion = metav1.GroupVersionForDiscovery{GroupVersion: gv.String(), Version: gv.Version}
		}
		ar := metav1.APIResource{
			Name: r.GVR.Resource, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: r.Verbs, ShortNames: r.ShortNames, Categories: r.Categories,
		}
		g.VersionedResources[gv.Version] = append(g.VersionedResources[gv.Version], ar)
		l := lists[slices.IndexFunc(lists, func(l *metav1.APIResourceList) bool { return l.GroupVersion == gv.String() })]
		l.APIResources = append(l.APIResources, ar)
	}
	return cgrestmapper.NewShortcutExpander(cgrestmapper.NewDiscoveryRESTMapper(groups), listsDiscovery{lists: lists}, nil)
}

// kubectlMappingFor is cli-runtime's resource.Builder.mappingFor
// (k8s.io/cli-runtime/pkg/resource/builder.go), the function behind
// "kubectl get ARG".
func kubectlMappingFor(restMapper meta.RESTMapper, resourceOrKindArg string) (*meta.RESTMapping, error) {
	fullySpecifiedGVR, groupResource := schema.ParseResourceArg(resourceOrKindArg)
	gvk := schema.GroupVersionKind{}
	if fullySpecifiedGVR != nil {
		gvk, _ = restMapper.KindFor(*fullySpecifiedGVR)
	}
	if gvk.Empty() {
		gvk, _ = restMapper.KindFor(groupResource.WithVersion(""))
	}
	if !gvk.Empty() {
		return restMapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	fullySpecifiedGVK, groupKind := schema.ParseKindArg(resourceOrKindArg)
	if fullySpecifiedGVK == nil {
		gvk := groupKind.WithVersion("")
		fullySpecifiedGVK = &gvk
	}
	if !fullySpecifiedGVK.Empty() {
		if mapping, err := restMapper.RESTMapping(fullySpecifiedGVK.GroupKind(), fullySpecifiedGVK.Version); err == nil {
			return mapping, nil
		}
	}
	mapping, err := restMapper.RESTMapping(groupKind, gvk.Version)
	if err != nil {
		if meta.IsNoMatchError(err) {
			return nil, fmt.Errorf("the server doesn't have a resource type %q", groupResource.Resource)
		}
		return nil, err
	}
	return mapping, nil
}

// keepsVersion reports whether ref is "short.version.group" and got is the
// resource kubectl found, in the version ref asked for.
func keepsVersion(ref string, got apiresource.Resource, kubectl schema.GroupVersionResource) bool {
	full, _ := schema.ParseResourceArg(ref)
	return full != nil && slices.Contains(got.ShortNames, full.Resource) &&
		got.GVR.Version == full.Version && got.GVR.GroupResource() == kubectl.GroupResource()
}

// TestResolveAgreesWithKubectl resolves every way kubectl lets one name
// each test resource (plural, singular, short names, kind, each with group
// and with version and group) with both kubectl's machinery and the
// Mapper, and requires the same answer wherever kubectl finds one, but for
// two deliberate differences: a kind without group resolves in any group,
// and a short name keeps the version given with it.
func TestResolveAgreesWithKubectl(t *testing.T) {
	rs := testResources(t)
	src := restmapper.NewStatic(rs)
	kubectl := kubectlMapper(src.Snapshot().Resources)
	m := restmapper.New(src, restmapper.Options{})

	var refs []string
	for _, r := range rs {
		g, v := r.GVR.Group, r.GVR.Version
		for _, n := range slices.Concat([]string{r.GVR.Resource, r.Singular, r.Kind, strings.ToLower(r.Kind)}, r.ShortNames) {
			refs = append(refs, n, n+"."+v+"."+g)
			if g != "" {
				refs = append(refs, n+"."+g)
				if i := strings.Index(g, "."); i > 0 {
					refs = append(refs, n+"."+g[:i]) // a group prefix
				}
			}
		}
	}
	refs = append(refs, "nosuchthing", "deployments.nosuchgroup", "deployments.v9.apps")
	slices.Sort(refs)
	refs = slices.Compact(refs)

	agreed := 0
	for _, ref := range refs {
		want, kerr := kubectlMappingFor(kubectl, ref)
		got, err := m.Resolve(ref)
		switch {
		case kerr != nil && err != nil:
			var nf *restmapper.NotFoundError
			if !errors.As(err, &nf) {
				t.Errorf("%q: error %v, want *NotFoundError", ref, err)
			}
		case kerr != nil:
			// The Mapper is more lenient than kubectl in one way only: a
			// kind without its group resolves in any group.
			_, gk := schema.ParseKindArg(ref)
			if gk.Group != "" || !strings.EqualFold(got.Kind, gk.Kind) {
				t.Errorf("%q: kubectl: %v; Mapper: %s", ref, kerr, got.GVR)
			}
		case err != nil:
			t.Errorf("%q: kubectl: %s; Mapper: %v", ref, want.Resource, err)
		case got.GVR != want.Resource && keepsVersion(ref, got, want.Resource):
			// kubectl's shortcut expander drops the version of a short
			// name ("hpa.v1.autoscaling" gives autoscaling/v2); the Mapper
			// honours it.
		case got.GVR != want.Resource:
			t.Errorf("%q: kubectl: %s; Mapper: %s", ref, want.Resource, got.GVR)
		default:
			agreed++
		}
	}
	t.Logf("%d references, %d resolved identically", len(refs), agreed)
	if agreed < len(rs) {
		t.Errorf("only %d references agreed", agreed)
	}
}
