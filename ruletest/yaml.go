package ruletest

import (
	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/diag"
	"github.com/kreact/kreact/internal/yamlnode"
)

// decoder walks the yaml.v3 node trees of test files with the decoder
// rule files use, so that both formats report the same mistakes in the
// same words, with the position of the value each is about.
type decoder struct{ yamlnode.Decoder }

func newDecoder(file string, errs *diag.ErrorList) *decoder {
	return &decoder{yamlnode.Decoder{File: file, Errs: errs}}
}

// fields checks that n is a mapping whose keys are all in known and
// returns its values by key. Unknown and duplicate keys are reported; nil is
// returned when n is not a mapping.
func (d *decoder) fields(n *yaml.Node, path string, known ...string) map[string]*yaml.Node {
	m := d.Object(n, path, known)
	if m == nil {
		return nil
	}
	out := make(map[string]*yaml.Node, len(m))
	for k, e := range m {
		out[k] = e.Value
	}
	return out
}

// list returns the items of the sequence n (none for null).
func (d *decoder) list(n *yaml.Node, path string) []*yaml.Node {
	items, _ := d.List(n, path)
	return items
}

// boolean returns the boolean n holds; anything else is reported.
func (d *decoder) boolean(n *yaml.Node, path string) bool {
	b, _ := d.Bool(n, path)
	return b
}

// strings returns a list of strings.
func (d *decoder) strings(n *yaml.Node, path string) ([]string, []*yaml.Node) {
	var out []string
	var nodes []*yaml.Node
	for i, item := range d.list(n, path) {
		if s, ok := d.Str(item, yamlnode.Index(path, i)); ok {
			out = append(out, s)
			nodes = append(nodes, item)
		}
	}
	return out, nodes
}
