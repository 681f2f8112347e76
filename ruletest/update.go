package ruletest

import (
	"bytes"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/kreact/kreact/actions"
	"github.com/kreact/kreact/internal/yamlnode"
)

// setActions replaces the case's expect.actions, in the file's YAML tree,
// with the given actions, creating expect and actions when they are
// missing. The rest of the tree, comments included, is left alone.
func (f *File) setActions(c *Case, list []actions.Action) {
	seq := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq"}
	if len(list) == 0 {
		seq.Style = yaml.FlowStyle
	}
	for _, a := range list {
		seq.Content = append(seq.Content, fieldsNode(ActionFields(a, len(f.rules) > 1)))
	}
	expect := child(c.node, "expect")
	if expect == nil || yamlnode.IsNull(expect) {
		m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
		setChild(c.node, "expect", m)
		expect = m
	}
	setChild(yamlnode.Deref(expect), "actions", seq)
}

// child returns the value of key in mapping m, or nil.
func child(m *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setChild sets key in mapping m to v, in place when the key is there
// (keeping the key's comments), else at the end.
func setChild(m *yaml.Node, key string, v *yaml.Node) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			v.LineComment, v.FootComment = old.LineComment, old.FootComment
			m.Content[i+1] = v
			return
		}
	}
	m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
}

// write saves the file's YAML tree back to its file, keeping its mode.
// yaml.v3 re-indents the file (two spaces, lists indented under their key)
// but keeps its content, comments and the style of every scalar.
func (f *File) write() error {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(f.doc); err != nil {
		return err
	}
	if err := enc.Close(); err != nil {
		return err
	}
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(f.Path); err == nil {
		mode = fi.Mode().Perm()
	}
	return os.WriteFile(f.Path, b.Bytes(), mode)
}
