package restmapper

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"gopkg.in/yaml.v3"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kreact/kreact/apiresource"
	"github.com/kreact/kreact/diag"
)

// ResourcesFromCRDFile returns the resources the CustomResourceDefinitions
// in data, the YAML text of file (any number of documents), define, as
// ResourcesFromCRD defines them. Every problem is in the returned
// diag.ErrorList, at the document it is about: a YAML syntax error (the
// documents after it are not read), a document that is not a mapping, a
// CRD that does not define resources. Empty documents are skipped. The
// resources of the documents without problems are returned too.
func ResourcesFromCRDFile(file string, data []byte) ([]apiresource.Resource, diag.ErrorList) {
	var out []apiresource.Resource
	var errs diag.ErrorList
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc yaml.Node
		if err := dec.Decode(&doc); err == io.EOF {
			return out, errs
		} else if err != nil {
			errs.Add(diag.Position{File: file}, "invalid YAML: "+strings.TrimPrefix(err.Error(), "yaml: "))
			return out, errs
		}
		if len(doc.Content) == 0 || doc.Content[0].Tag == "!!null" {
			continue
		}
		root := doc.Content[0]
		pos := diag.Position{File: file, Line: root.Line, Col: root.Column}
		var m map[string]any
		if err := root.Decode(&m); err != nil || root.Kind != yaml.MappingNode {
			errs.Add(pos, "want a CustomResourceDefinition, a mapping")
			continue
		}
		// yaml.v3 gives int for integers; unstructured wants int64.
		obj, err := jsonValue(m)
		if err != nil {
			errs.Add(pos, err.Error())
			continue
		}
		rs, err := ResourcesFromCRD(&unstructured.Unstructured{Object: obj.(map[string]any)})
		if err != nil {
			errs.Add(pos, err.Error())
			continue
		}
		out = append(out, rs...)
	}
}

// jsonValue converts what yaml.v3 decodes into JSON-compatible values.
func jsonValue(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			c, err := jsonValue(x)
			if err != nil {
				return nil, err
			}
			out[k] = c
		}
		return out, nil
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			c, err := jsonValue(x)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case int:
		return int64(v), nil
	case map[any]any:
		return nil, errors.New("keys must be strings")
	default:
		return v, nil
	}
}
