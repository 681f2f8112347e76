package rules

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/diag"
)

// DescriptionAnnotation holds a rule object's description: ObjectMeta has
// no field for what a rule file's metadata.description says.
const DescriptionAnnotation = Group + "/description"

// ObjectRef names a rule object: a Rule (a team's, in Namespace) or a
// ClusterRule (an administrator's; Namespace is empty).
type ObjectRef struct {
	Kind      string
	Namespace string
	Name      string
}

// RuleName is the name the rule runs under: a ClusterRule's name, as a
// rule file's (the administrators' kinds share one set of names), and
// NAMESPACE.NAME for a Rule. Rule names and namespaces are DNS labels, so
// a dot cannot occur in the first and no Rule's name is another's or a
// ClusterRule's.
func (o ObjectRef) RuleName() string {
	if o.Namespace == "" {
		return o.Name
	}
	return o.Namespace + "." + o.Name
}

// Source is what a rule from the object is known by where a rule file's
// path would be, in positions and as Rule.Source: rule/NAMESPACE/NAME or
// clusterrule/NAME, as kubectl names objects.
func (o ObjectRef) Source() string {
	if o.Namespace == "" {
		return strings.ToLower(o.Kind) + "/" + o.Name
	}
	return strings.ToLower(o.Kind) + "/" + o.Namespace + "/" + o.Name
}

// ObjectOf returns the ObjectRef of a rule object's content (as
// unstructured.Unstructured holds it), or an error if it is not a Rule or
// a ClusterRule of this format's version.
func ObjectOf(content map[string]any) (ObjectRef, error) {
	apiVersion, _ := content["apiVersion"].(string)
	kind, _ := content["kind"].(string)
	md, _ := content["metadata"].(map[string]any)
	name, _ := md["name"].(string)
	ns, _ := md["namespace"].(string)
	o := ObjectRef{Kind: kind, Namespace: ns, Name: name}
	switch {
	case apiVersion != APIVersion || (kind != Kind && kind != ClusterKind):
		return o, fmt.Errorf("%s %s is not a rule object (want apiVersion %s, kind %s or %s)", apiVersion, kind, APIVersion, Kind, ClusterKind)
	case name == "":
		return o, fmt.Errorf("%s has no metadata.name", kind)
	case kind == Kind && ns == "":
		return o, fmt.Errorf("%s %s has no metadata.namespace", kind, name)
	case kind == ClusterKind && ns != "":
		return o, fmt.Errorf("%s %s is cluster-scoped but has metadata.namespace %s", kind, name, ns)
	}
	return o, nil
}

// ParseObject parses a rule object (the content of a Rule or a
// ClusterRule) as Parse parses a rule file's document, with the same
// checks and defaults, so that a rule means the same wherever it comes
// from. What differs:
//   - the rule's Name is ObjectRef.RuleName, its Source (and the file of
//     its positions) ObjectRef.Source, and a Rule's Namespace its own;
//   - a problem is reported at the object (rule/NS/NAME: message, the
//     message naming the field), and a script's line and column are
//     within spec.script (rule/NS/NAME: spec.script:12:5), for an object
//     has no file whose lines a position could count;
//   - the script must be inline: spec.scriptFile names a file beside a
//     rule file, and an object has none (nor may it read kreact's);
//   - metadata.description is the DescriptionAnnotation.
//
// The error, if any, is a diag.ErrorList; the rule is then nil.
func ParseObject(content map[string]any) (*Rule, error) {
	r, errs := parseObject(content)
	if len(errs) > 0 {
		return nil, errs
	}
	return r, nil
}

// parseObject is ParseObject, which also returns the rule of an object
// with problems, decoded as far as it goes, for LoadAll's broken rules;
// the rule is nil only when content is no rule object.
func parseObject(content map[string]any) (*Rule, diag.ErrorList) {
	o, err := ObjectOf(content)
	if err != nil {
		var errs diag.ErrorList
		errs.Add(diag.Position{File: o.Source()}, err.Error())
		return nil, errs
	}
	md, _ := content["metadata"].(map[string]any)
	meta := map[string]any{"name": o.Name}
	if annotations, ok := md["annotations"].(map[string]any); ok {
		if d, ok := annotations[DescriptionAnnotation]; ok {
			meta["description"] = d
		}
	}
	doc := map[string]any{"apiVersion": APIVersion, "kind": Kind, "metadata": meta}
	if spec, ok := content["spec"]; ok {
		doc["spec"] = spec
	}
	var n yaml.Node
	var errs diag.ErrorList
	if err := n.Encode(doc); err != nil {
		errs.AddError(diag.Position{File: o.Source()}, err)
		return nil, errs
	}
	data, err := yaml.Marshal(&n)
	if err != nil {
		errs.AddError(diag.Position{File: o.Source()}, err)
		return nil, errs
	}
	var rendered yaml.Node
	if err := yaml.Unmarshal(data, &rendered); err != nil {
		errs.AddError(diag.Position{File: o.Source()}, err)
		return nil, errs
	}
	d := newDecoder(o.Source(), strings.Split(string(data), "\n"), &errs)
	d.fromObject = true
	d.namespace = o.Namespace
	r := d.rule(&rendered)
	if r != nil && o.Namespace != "" {
		confine(r, o, &errs)
	}
	for _, e := range errs {
		// The line and column are those of a rendering no user saw.
		e.Pos = diag.Position{Rule: e.Pos.Rule, File: e.Pos.File}
	}
	errs.Sort()
	if r == nil {
		return nil, errs
	}
	blankPositions(r)
	if r.Name != "" { // else metadata.name is no DNS label: an error
		r.Name = o.RuleName()
	}
	r.Namespace = o.Namespace
	r.Pos = diag.Position{Rule: r.Name, File: o.Source()}
	r.ScriptPos = diag.Position{File: o.Source() + ": spec.script", Line: 1, Col: 1}
	return r, errs
}

// confine keeps a Rule, a team's, to its namespace: a watch that names no
// namespace watches only the Rule's own (and so do the permissions that
// name none, which default to the watched namespaces), and one that names
// another, or a permission that does, is an error. Resolve refuses what
// the Rule names of cluster-scoped resources.
func confine(r *Rule, o ObjectRef, errs *diag.ErrorList) {
	at := diag.Position{File: o.Source()}
	outside := func(path string, ns []string) {
		for _, n := range ns {
			if n != o.Namespace {
				errs.Addf(at, "%s: %q is outside namespace %s: a Rule acts in its own namespace only (a ClusterRule may reach others)", path, n, o.Namespace)
			}
		}
	}
	for i := range r.Watch {
		w := &r.Watch[i]
		if len(w.Namespaces) == 0 {
			w.Namespaces = []string{o.Namespace}
			continue
		}
		outside(fmt.Sprintf("spec.watch[%d].namespaces", i), w.Namespaces)
	}
	for i, p := range r.Permissions {
		path := fmt.Sprintf("spec.permissions[%d].namespaces", i)
		if p.AllNamespaces {
			errs.Addf(at, "%s: \"*\" (all namespaces) is outside namespace %s: a Rule acts in its own namespace only (a ClusterRule may reach others)", path, o.Namespace)
		}
		outside(path, p.Namespaces)
	}
}
