package rules

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// TypeMeta is the apiVersion and kind of one YAML document.
type TypeMeta struct {
	APIVersion string `yaml:"apiVersion"`
	Kind       string `yaml:"kind"`
}

// IsCRD reports whether the document is a CustomResourceDefinition.
func (t TypeMeta) IsCRD() bool {
	return t.Kind == "CustomResourceDefinition" && strings.HasPrefix(t.APIVersion, "apiextensions.k8s.io/")
}

// maxManifestSize bounds the files FileTypes reads.
const maxManifestSize = 4 << 20

// FileTypes returns the apiVersion and kind of every document of a YAML
// file, so that the authoring commands can tell rule files, test files and
// CRD manifests apart in a directory. ok is false when the file is not a
// regular file of at most 4 MiB, is empty, or is not valid YAML: such a
// file is left to the loaders, which say what is wrong with it.
func FileTypes(path string) (types []TypeMeta, ok bool) {
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() > maxManifestSize {
		return nil, false
	}
	data, err := ReadFile(path)
	if err != nil {
		return nil, false
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var t TypeMeta
		err := dec.Decode(&t)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, false
		}
		types = append(types, t)
	}
	return types, len(types) > 0
}

// FileIs reports whether every document of the YAML file at path is what
// is reports, and there is at least one.
func FileIs(path string, is func(TypeMeta) bool) bool {
	types, ok := FileTypes(path)
	if !ok {
		return false
	}
	for _, t := range types {
		if !is(t) {
			return false
		}
	}
	return true
}

// NestedFiles returns the YAML files (.yaml, .yml) in the subfolders of
// root, at any depth, whose documents are all what is reports (FileIs).
// The files directly in root and hidden folders are left out: a folder of
// rules keeps its tests and CRDs beside the rules, in subfolders, which
// the authoring commands find so. Unreadable entries are skipped.
func NestedFiles(root string, is func(TypeMeta) bool) []string {
	root = filepath.Clean(root)
	var out []string
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return nil
		case d.IsDir() && path != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case d.IsDir() || filepath.Dir(path) == root:
			return nil
		}
		if ext := filepath.Ext(path); (ext == ".yaml" || ext == ".yml") && FileIs(path, is) {
			out = append(out, path)
		}
		return nil
	})
	return out
}
