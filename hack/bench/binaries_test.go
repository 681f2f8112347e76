package main

import (
	"os"
	"path/filepath"
	"testing"
)

// Every binary a run measures is copied, byte for byte and executable,
// and the run uses the copies; a flag left empty stays empty.
func TestCopyBinariesMeasuresCopies(t *testing.T) {
	src, dst := t.TempDir(), t.TempDir()
	kreact, base := filepath.Join(src, "kreact"), filepath.Join(src, "kreact-base")
	for path, data := range map[string]string{kreact: "new build", base: "old build"} {
		if err := os.WriteFile(path, []byte(data), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { selfBinary = "" })
	f := flags{kreact: kreact, kreactBase: base}
	if err := copyBinaries(dst, &f); err != nil {
		t.Fatal(err)
	}
	if f.manyBase != "" {
		t.Errorf("-many-base = %q, want it left empty", f.manyBase)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bare, err := bareBinary()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ copy, original string }{{f.kreact, kreact}, {f.kreactBase, base}, {bare, exe}} {
		if filepath.Dir(c.copy) != dst {
			t.Errorf("%s is run from %s, want a copy in %s", c.original, c.copy, dst)
			continue
		}
		got, err := os.ReadFile(c.copy)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(c.original)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Errorf("%s: the copy differs from the original", c.original)
		}
		if st, err := os.Stat(c.copy); err != nil || st.Mode().Perm()&0o100 == 0 {
			t.Errorf("%s: the copy is not executable (%v, %v)", c.original, st.Mode(), err)
		}
	}
}
