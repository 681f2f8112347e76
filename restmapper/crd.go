package restmapper

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/version"

	"github.com/kreact/kreact/apiresource"
)

// crdVerbs are the verbs the API server serves for every custom resource.
var crdVerbs = []string{"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"}

// ResourcesFromCRD returns the resources an API server would discover for
// crd, an apiextensions.k8s.io/v1 CustomResourceDefinition read from YAML:
// one per served version, with the CRD's scope, plural, singular (the
// lower-cased kind when unset), kind, short names, categories and
// subresources (status, scale).
//
// The preferred version is the one the API server prefers: the highest
// served version in Kubernetes version order (v2 > v1 > v1beta2 > v1alpha1),
// which is not necessarily the storage version. Resources come in that
// order. If several CRDs share a group the server prefers the highest
// version across all of them; this function sees one CRD only.
//
// Every problem found is reported, joined into one error.
func ResourcesFromCRD(crd *unstructured.Unstructured) ([]apiresource.Resource, error) {
	if crd == nil {
		return nil, errors.New("nil CustomResourceDefinition")
	}
	name := crd.GetName()
	var errs []error
	problem := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("CustomResourceDefinition %q: "+format, append([]any{name}, args...)...))
	}
	if gvk := crd.GroupVersionKind(); gvk != (schema.GroupVersionKind{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"}) {
		problem("want apiVersion apiextensions.k8s.io/v1 and kind CustomResourceDefinition, got %s %s", gvk.GroupVersion(), gvk.Kind)
		return nil, errors.Join(errs...)
	}
	str := func(path ...string) string {
		s, _, err := unstructured.NestedString(crd.Object, path...)
		if err != nil {
			problem("%s: %v", strings.Join(path, "."), err)
		}
		return s
	}
	strs := func(path ...string) []string {
		s, _, err := unstructured.NestedStringSlice(crd.Object, path...)
		if err != nil {
			problem("%s: %v", strings.Join(path, "."), err)
		}
		return s
	}

	group := str("spec", "group")
	plural := str("spec", "names", "plural")
	singular := str("spec", "names", "singular")
	kind := str("spec", "names", "kind")
	shortNames := strs("spec", "names", "shortNames")
	categories := strs("spec", "names", "categories")
	scope := str("spec", "scope")
	if group == "" {
		problem("spec.group is required")
	}
	if plural == "" {
		problem("spec.names.plural is required")
	}
	if kind == "" {
		problem("spec.names.kind is required")
	}
	if group != "" && plural != "" && name != plural+"."+group {
		problem("metadata.name must be %q (spec.names.plural.spec.group)", plural+"."+group)
	}
	if scope != "Namespaced" && scope != "Cluster" {
		problem("spec.scope must be Namespaced or Cluster, got %q", scope)
	}
	if singular == "" {
		singular = strings.ToLower(kind)
	}

	versions, _, err := unstructured.NestedSlice(crd.Object, "spec", "versions")
	if err != nil {
		problem("spec.versions: %v", err)
	}
	var served []string
	subs := map[string][]string{}
	for i, v := range versions {
		m, ok := v.(map[string]any)
		if !ok {
			problem("spec.versions[%d]: not an object", i)
			continue
		}
		vname, _, _ := unstructured.NestedString(m, "name")
		isServed, _, _ := unstructured.NestedBool(m, "served")
		if vname == "" {
			problem("spec.versions[%d].name is required", i)
			continue
		}
		if isServed && !slices.Contains(served, vname) {
			served = append(served, vname)
			// The server serves spec.versions[].subresources.status and
			// .scale when present, even empty ({}).
			for _, sub := range []string{"scale", "status"} {
				if _, ok, _ := unstructured.NestedFieldNoCopy(m, "subresources", sub); ok {
					subs[vname] = append(subs[vname], sub)
				}
			}
		}
	}
	if len(served) == 0 {
		problem("no served version in spec.versions")
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}

	slices.SortStableFunc(served, func(a, b string) int {
		return -version.CompareKubeAwareVersionStrings(a, b)
	})
	out := make([]apiresource.Resource, 0, len(served))
	for i, v := range served {
		out = append(out, apiresource.Resource{
			GVR:          schema.GroupVersionResource{Group: group, Version: v, Resource: plural},
			Kind:         kind,
			Singular:     singular,
			Namespaced:   scope == "Namespaced",
			ShortNames:   slices.Clone(shortNames),
			Categories:   slices.Clone(categories),
			Verbs:        slices.Clone(crdVerbs),
			Preferred:    i == 0,
			Subresources: subs[v],
		})
	}
	return out, nil
}
