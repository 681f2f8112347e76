package rules

import (
	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/internal/yamlnode"
)

// The documents of a manifest of rule objects, which a rules file may
// hold beside rule documents: a ClusterRule, a Rule with a
// metadata.namespace (a team's), or a List of them as `kubectl get rules
// -A -o yaml` prints it. Each object goes to parseObject, as kreact run
// parses the objects it watches and its admission server those it is
// asked about, so that a rule object means the same wherever it is read;
// what the API server adds (status, uid, resourceVersion, managedFields)
// is ignored there. A kind Rule without a namespace is a rule file's
// document, read as ever.

// ListKind and ListAPIVersion are what kubectl prints around the objects
// of `kubectl get -o yaml`.
const (
	ListKind       = "List"
	ListAPIVersion = "v1"
)

// isManifest reports whether the document root is rule objects rather
// than a rule file's document: a ClusterRule, a List, or a Rule with a
// metadata.namespace.
func isManifest(root *yaml.Node) bool {
	if root.Kind != yaml.MappingNode {
		return false
	}
	kind := scalar(yamlnode.Lookup(root, "kind"))
	switch kind {
	case ClusterKind:
		return true
	case ListKind:
		return scalar(yamlnode.Lookup(root, "apiVersion")) == ListAPIVersion
	case Kind:
		md := yamlnode.Lookup(root, "metadata")
		if !md.Present() || yamlnode.Deref(md.Value).Kind != yaml.MappingNode {
			return false
		}
		return yamlnode.Lookup(yamlnode.Deref(md.Value), "namespace").Present()
	}
	return false
}

// scalar is the text of a scalar entry, empty for anything else.
func scalar(e yamlnode.Entry) string {
	if !e.Present() {
		return ""
	}
	if v := yamlnode.Deref(e.Value); v.Kind == yaml.ScalarNode {
		return v.Value
	}
	return ""
}

// objects parses the rule objects of a manifest document (isManifest),
// adding their problems to d's list. A rule with problems is returned
// too, marked in broken, as parseAll does for rule documents. Every rule's
// Source is d's file: a file holds the rules, whatever their kind, for
// what follows files (the reload of kreact run keeps the rules of a file
// that fails).
func (d *decoder) objects(root *yaml.Node, broken map[*Rule]bool) []*Rule {
	items := []*yaml.Node{root}
	list := scalar(yamlnode.Lookup(root, "kind")) == ListKind
	if list {
		e := yamlnode.Lookup(root, "items")
		if !e.Present() {
			return nil // an empty List: kubectl prints items: [] for none
		}
		var ok bool
		if items, ok = d.List(e.Value, "items"); !ok {
			return nil
		}
	}
	var out []*Rule
	for i, item := range items {
		path := "document"
		if list {
			path = yamlnode.Index("items", i)
		}
		v, ok := d.Value(item, path)
		if !ok {
			continue
		}
		content, isMap := v.(map[string]any)
		if !isMap {
			d.Errorf(item, "%s: expected a rule object (a mapping with apiVersion, kind, metadata and spec), got %s", path, yamlnode.Describe(yamlnode.Deref(item)))
			continue
		}
		if _, err := ObjectOf(content); err != nil {
			if list {
				d.Errorf(item, "%s: %v; every item of a List in a rules file must be a Rule or a ClusterRule", path, err)
			} else {
				d.Errorf(item, "%v", err)
			}
			continue
		}
		r, errs := parseObject(content)
		*d.Errs = append(*d.Errs, errs...)
		if r == nil {
			continue
		}
		r.Source = d.File
		out = append(out, r)
		broken[r] = len(errs) > 0
	}
	return out
}
