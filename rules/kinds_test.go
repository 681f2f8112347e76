package rules

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFileIs(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	crd := "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: x}\n"
	rule := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\n"
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	isCRD := TypeMeta.IsCRD
	tests := []struct {
		name, path string
		want       bool
	}{
		{"one CRD", write("one.yaml", crd), true},
		{"two CRDs", write("two.yaml", crd+"---\n"+crd), true},
		{"a CRD and a rule", write("mixed.yaml", crd+"---\n"+rule), false},
		{"a rule", write("rule.yaml", rule), false},
		{"another group's kind", write("other.yaml", "apiVersion: example.com/v1\nkind: CustomResourceDefinition\n"), false},
		{"invalid YAML", write("bad.yaml", "kind: [\n"), false},
		{"empty", write("empty.yaml", ""), false},
		{"missing", filepath.Join(dir, "missing.yaml"), false},
		{"a FIFO is not read", fifo, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := FileIs(tt.path, isCRD); got != tt.want {
				t.Errorf("FileIs(%s, IsCRD) = %v, want %v", tt.name, got, tt.want)
			}
		})
	}
}
