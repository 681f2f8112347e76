package rules

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// ruleWithScriptFile writes a rule file in dir whose spec.scriptFile is
// name, and returns the error of parsing it.
func ruleWithScriptFile(t *testing.T, dir, name string) error {
	t.Helper()
	path := filepath.Join(dir, "rule.yaml")
	yaml := "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r}\nspec:\n  watch: [{resource: pods}]\n  scriptFile: " + name + "\n"
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := ParseFile(path)
	return err
}

func TestScriptFileStaysInsideTheRules(t *testing.T) {
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "secret.js"), []byte("function onAdd() {} // SECRET"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		file    string
		wantErr string
	}{
		{name: "a file beside the rule", file: "ok.js", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "ok.js"), "function onAdd() {}")
		}},
		{name: "a ConfigMap mount (symlinks inside the directory)", file: "cm.js", setup: func(t *testing.T, dir string) {
			data := filepath.Join(dir, "..2026_11_23")
			must(t, os.Mkdir(data, 0o755))
			write(t, filepath.Join(data, "cm.js"), "function onAdd() {}")
			must(t, os.Symlink("..2026_11_23", filepath.Join(dir, "..data")))
			must(t, os.Symlink(filepath.Join("..data", "cm.js"), filepath.Join(dir, "cm.js")))
		}},
		{name: "an absolute path", file: "/etc/hostname", wantErr: "want a path relative to the rule file"},
		{name: "a path out of the directory", file: "../x.js", wantErr: "is outside the rule file's directory"},
		{name: "a symlink out of the directory", file: "link.js", wantErr: "is outside the rule file's directory", setup: func(t *testing.T, dir string) {
			must(t, os.Symlink(filepath.Join(outside, "secret.js"), filepath.Join(dir, "link.js")))
		}},
		{name: "a device", file: "/dev/zero", wantErr: "want a path relative to the rule file"},
		{name: "a symlink to a device", file: "zero.js", wantErr: "is outside the rule file's directory", setup: func(t *testing.T, dir string) {
			must(t, os.Symlink("/dev/zero", filepath.Join(dir, "zero.js")))
		}},
		{name: "a FIFO", file: "fifo.js", wantErr: "is not a regular file", setup: func(t *testing.T, dir string) {
			must(t, syscall.Mkfifo(filepath.Join(dir, "fifo.js"), 0o644))
		}},
		{name: "a directory", file: "sub", wantErr: "is not a regular file", setup: func(t *testing.T, dir string) {
			must(t, os.Mkdir(filepath.Join(dir, "sub"), 0o755))
		}},
		{name: "too large", file: "big.js", wantErr: "over the limit", setup: func(t *testing.T, dir string) {
			write(t, filepath.Join(dir, "big.js"), "//"+strings.Repeat("x", MaxScriptSize))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.setup != nil {
				tt.setup(t, dir)
			}
			start := time.Now()
			err := ruleWithScriptFile(t, dir, tt.file)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("loading took %v", took)
			}
			switch {
			case tt.wantErr == "" && err != nil:
				t.Fatalf("ParseFile = %v", err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("ParseFile = %v, want an error containing %q", err, tt.wantErr)
			}
			if err != nil && strings.Contains(err.Error(), "SECRET") {
				t.Errorf("the error quotes the file: %v", err)
			}
		})
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	must(t, os.WriteFile(path, []byte(content), 0o644))
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
