package rules

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadersRefuseAFIFO: a FIFO as a rule file, named or in a directory,
// is refused with a clear error, never opened for reading (which would
// block until a writer comes). No writer ever opens the FIFO here, so a
// loader that reads it hangs until the bound below.
func TestLoadersRefuseAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatalf("mkfifo: %v", err)
	}
	good := filepath.Join(dir, "good.yaml")
	write(t, good, "apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: good}\nspec:\n  watch: [{resource: pods}]\n  script: 'function onAdd() {}'\n")
	const want = "not a regular file (a named pipe)"
	loaders := map[string]func() error{
		"ReadFile":  func() error { _, err := ReadFile(fifo); return err },
		"ParseFile": func() error { _, err := ParseFile(fifo); return err },
		"Load":      func() error { _, err := Load(fifo); return err },
		"Load dir":  func() error { _, err := Load(dir); return err },
		"LoadEach dir": func() error {
			rs, failed, err := LoadEach(dir)
			if len(rs) != 1 || rs[0].Name != "good" {
				t.Errorf("LoadEach: rules %v, want the good rule beside the FIFO", rs)
			}
			if len(failed) != 1 || failed[0] != fifo {
				t.Errorf("LoadEach: failed %v, want [%s]", failed, fifo)
			}
			return err
		},
	}
	loaders["FileTypes"] = func() error {
		if _, ok := FileTypes(fifo); ok {
			t.Error("FileTypes: ok for a FIFO")
		}
		_, err := ReadFile(fifo)
		return err
	}
	for name, load := range loaders {
		t.Run(name, func(t *testing.T) {
			done := make(chan error, 1)
			go func() { done <- load() }()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("error = %v, want one saying %q", err, want)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the loader hangs on a FIFO")
			}
		})
	}
}

func TestReadFileRefusesDevicesAndDirectories(t *testing.T) {
	if _, err := ReadFile(os.DevNull); err == nil || !strings.Contains(err.Error(), "a character device") {
		t.Errorf("ReadFile(%s) = %v, want a not-a-regular-file error", os.DevNull, err)
	}
	if _, err := ReadFile(t.TempDir()); err == nil || !strings.Contains(err.Error(), "a directory") {
		t.Errorf("ReadFile(dir) = %v, want a not-a-regular-file error", err)
	}
}
