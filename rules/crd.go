package rules

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The rule kinds as Kubernetes objects: a Rule (Kind) is a team's rule,
// in its namespace; a ClusterRule is an administrator's, cluster-scoped:
// the kind a rule file is. Both have the spec of a rule file.
const (
	ClusterKind     = "ClusterRule"
	namespacedNames = "rules"
	clusterNames    = "clusterrules"
)

// CRDs returns the CustomResourceDefinitions of Rule and ClusterRule, as
// apiextensions.k8s.io/v1 objects. Their spec schema is the rule JSON
// Schema's (JSONSchema), converted to a structural OpenAPI schema, so that
// the API server refuses a malformed rule object even while kreact is
// down; the two cannot drift (TestCRDFilesAreGenerated). What the API
// server cannot check (a script's syntax, resource names, selectors) is
// kreact's to check.
func CRDs() ([]map[string]any, error) {
	var doc map[string]any
	if err := json.Unmarshal(schemaJSON, &doc); err != nil {
		return nil, fmt.Errorf("rule schema: %w", err)
	}
	c := converter{definitions: doc["definitions"].(map[string]any)}
	props := doc["properties"].(map[string]any)
	spec, err := c.convert("spec", props["spec"].(map[string]any))
	if err != nil {
		return nil, err
	}
	return []map[string]any{
		crd(Kind, namespacedNames, "Namespaced", spec),
		crd(ClusterKind, clusterNames, "Cluster", spec),
	}, nil
}

func crd(kind, plural, scope string, spec map[string]any) map[string]any {
	shortName := map[string]string{Kind: "krule", ClusterKind: "kcrule"}[kind]
	column := func(name, typ, path, desc string) map[string]any {
		return map[string]any{"name": name, "type": typ, "jsonPath": path, "description": desc}
	}
	return map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1",
		"kind":       "CustomResourceDefinition",
		"metadata":   map[string]any{"name": plural + "." + Group},
		"spec": map[string]any{
			"group": Group,
			"scope": scope,
			"names": map[string]any{
				"kind": kind, "listKind": kind + "List", "plural": plural, "singular": strings.ToLower(kind),
				"shortNames": []any{shortName}, "categories": []any{"kreact"},
			},
			"versions": []any{map[string]any{
				"name": Version, "served": true, "storage": true,
				"subresources": map[string]any{"status": map[string]any{}},
				"additionalPrinterColumns": []any{
					column("Ready", "string", `.status.conditions[?(@.type=="Ready")].status`, "Whether the rule runs."),
					column("Calls", "integer", ".status.calls", "Handler calls made."),
					column("Failures", "integer", ".status.failures", "Handler calls that failed."),
					column("Age", "date", ".metadata.creationTimestamp", ""),
				},
				"schema": map[string]any{"openAPIV3Schema": map[string]any{
					"description": "A kreact reaction rule: which Kubernetes resources to watch, the JavaScript that reacts to their changes, and what its actions may do. See docs/rules.md.",
					"type":        "object",
					"required":    []any{"spec"},
					"properties": map[string]any{
						"apiVersion": map[string]any{"type": "string"},
						"kind":       map[string]any{"type": "string"},
						"metadata":   map[string]any{"type": "object"},
						"spec":       spec,
						"status":     statusSchema(),
					},
				}},
			}},
		},
	}
}

// statusSchema is what kreact reports of a rule object: whether it runs
// (the Ready condition), each problem with its place, and its counts.
func statusSchema() map[string]any {
	str := func(desc string) map[string]any { return map[string]any{"type": "string", "description": desc} }
	count := func(desc string) map[string]any {
		return map[string]any{"type": "integer", "format": "int64", "minimum": 0, "description": desc}
	}
	return map[string]any{
		"type":        "object",
		"description": "What kreact reports of the rule; written by kreact, at most a few times a minute.",
		"properties": map[string]any{
			"observedGeneration": map[string]any{"type": "integer", "format": "int64", "description": "The generation of the spec the status describes."},
			"conditions": map[string]any{
				"type":                   "array",
				"description":            "Ready: True when the rule runs, False with the reason when it does not.",
				"x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": []any{"type"},
				"items": map[string]any{
					"type":     "object",
					"required": []any{"type", "status"},
					"properties": map[string]any{
						"type":               str("The condition's type."),
						"status":             map[string]any{"type": "string", "enum": []any{"True", "False", "Unknown"}},
						"observedGeneration": map[string]any{"type": "integer", "format": "int64"},
						"lastTransitionTime": map[string]any{"type": "string", "format": "date-time"},
						"reason":             str("CamelCase reason."),
						"message":            str("For humans."),
					},
				},
			},
			"problems": map[string]any{
				"type":        "array",
				"description": "Every problem found in the rule, as kreact validate reports them.",
				"items": map[string]any{
					"type": "object",
					"properties": map[string]any{
						"field":    str("The field's path (spec.watch[0].resource)."),
						"position": str("Where in the field, for a script: line:col."),
						"severity": map[string]any{"type": "string", "enum": []any{"error", "warning"}},
						"message":  str("What is wrong."),
					},
				},
			},
			"calls":    count("Handler calls made since the rule started."),
			"failures": count("Handler calls that failed (retries included)."),
			"actions":  count("Actions done."),
			"givenUp":  count("Calls and actions given up after their retries."),
			"lastError": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"message": str("The error."),
					"time":    map[string]any{"type": "string", "format": "date-time"},
				},
			},
		},
	}
}

// converter turns the rule JSON Schema (draft-07) into a structural
// OpenAPI v3 schema, as the API server accepts it in a CRD. It knows
// exactly the keywords the rule schema uses; any other is an error, so a
// change of the schema that it cannot express fails TestCRDFilesAreGenerated
// rather than passing unchecked.
type converter struct {
	definitions map[string]any
}

func (c converter) convert(path string, s map[string]any) (map[string]any, error) {
	if ref, ok := s["$ref"].(string); ok {
		def, ok := c.definitions[strings.TrimPrefix(ref, "#/definitions/")].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%s: unknown $ref %s", path, ref)
		}
		return c.convert(path, def)
	}
	out := map[string]any{}
	for _, k := range slices.Sorted(maps.Keys(s)) {
		v := s[k]
		switch k {
		case "description", "type", "enum", "pattern", "minLength", "maxLength", "minimum", "maximum", "minItems", "maxItems", "required":
			out[k] = v
		case "const":
			out["enum"] = []any{v}
		case "exclusiveMinimum":
			// draft-07's number is OpenAPI v3.0's minimum and a boolean.
			out["minimum"], out["exclusiveMinimum"] = v, true
		case "default", "additionalProperties", "$schema", "$id", "title", "definitions":
			// Defaults are kreact's to apply, one semantics for files and
			// objects; unknown fields are pruned, and refused by kubectl's
			// strict field validation.
		case "uniqueItems":
			// An array of scalars that must be unique is a set to the
			// API server, which then refuses duplicates.
			out["x-kubernetes-list-type"] = "set"
		case "properties":
			props := map[string]any{}
			for name, p := range v.(map[string]any) {
				conv, err := c.convert(path+"."+name, p.(map[string]any))
				if err != nil {
					return nil, err
				}
				props[name] = conv
			}
			out[k] = props
		case "items":
			conv, err := c.convert(path+"[]", v.(map[string]any))
			if err != nil {
				return nil, err
			}
			out[k] = conv
		case "oneOf":
			if err := c.oneOf(path, v.([]any), out); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: the CRD converter does not know the keyword %q", path, k)
		}
	}
	if _, ok := out["type"]; !ok {
		// A structural schema types every node; the rule schema leaves
		// the type of an enum of strings implicit.
		if enum, ok := out["enum"].([]any); ok && len(enum) > 0 {
			if _, isString := enum[0].(string); isString {
				out["type"] = "string"
			}
		}
		if _, ok := out["type"]; !ok {
			return nil, fmt.Errorf("%s: no type", path)
		}
	}
	return out, nil
}

// oneOf converts the two forms of oneOf the rule schema has: fields of
// which exactly one is required (a CEL rule),
// and a list whose items are either the single value "*" or names (the
// namespaces of a permission), which becomes one item schema that takes
// both.
func (c converter) oneOf(path string, branches []any, out map[string]any) error {
	var kept []any
	var items []any
	star := false
	for _, b := range branches {
		bm := b.(map[string]any)
		if it, ok := bm["items"].(map[string]any); ok {
			for k := range bm {
				if k != "items" && k != "maxItems" {
					return fmt.Errorf("%s: oneOf over items with %q", path, k)
				}
			}
			if it["const"] == "*" && bm["maxItems"] == float64(1) {
				star = true
				continue
			}
			conv, err := c.convert(path+"[]", it)
			if err != nil {
				return err
			}
			items = append(items, conv)
			continue
		}
		for k := range bm {
			if k != "required" && k != "not" {
				return fmt.Errorf("%s: oneOf with %q", path, k)
			}
		}
		kept = append(kept, bm)
	}
	if len(kept) > 0 {
		rule, err := exactlyOne(path, kept)
		if err != nil {
			return err
		}
		// A CEL rule says it in the user's words, where oneOf would
		// answer "must validate one and only one schema".
		out["x-kubernetes-validations"] = []any{rule}
	}
	if star {
		if len(items) != 1 {
			return fmt.Errorf(`%s: oneOf of "*" and %d item schemas`, path, len(items))
		}
		it := items[0].(map[string]any)
		pattern, _ := it["pattern"].(string)
		if !strings.HasPrefix(pattern, "^") || !strings.HasSuffix(pattern, "$") {
			return fmt.Errorf("%s: item pattern %q is not anchored", path, pattern)
		}
		// That "*" stands alone is left to kreact's checks: a CEL rule
		// over a list without maxItems is over the API server's cost
		// budget, and the rule format sets no such bound.
		it["pattern"] = `^(\*|` + pattern[1:len(pattern)-1] + `)$`
		out["items"] = it
	}
	return nil
}

// exactlyOne turns oneOf [{required: [a], not: {required: [b]}}, {required:
// [b], not: {required: [a]}}] into the CEL rule that exactly one of a and
// b is set.
func exactlyOne(path string, branches []any) (map[string]any, error) {
	var names []string
	for _, b := range branches {
		req, _ := b.(map[string]any)["required"].([]any)
		if len(req) != 1 {
			return nil, fmt.Errorf("%s: oneOf branch %v is not one required field", path, b)
		}
		names = append(names, req[0].(string))
	}
	if len(names) != 2 {
		return nil, fmt.Errorf("%s: oneOf of %d required fields", path, len(names))
	}
	return map[string]any{
		"rule":    fmt.Sprintf("has(self.%s) != has(self.%s)", names[0], names[1]),
		"message": fmt.Sprintf("exactly one of %s and %s", names[0], names[1]),
	}, nil
}
