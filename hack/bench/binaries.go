package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// selfBinary is the copy of this program that runs the bare controllers
// (-bare, -bare-many, -bare-discovery); set by copyBinaries, else this
// program itself.
var selfBinary string

// bareBinary returns the binary that runs the bare controllers.
func bareBinary() (string, error) {
	if selfBinary != "" {
		return selfBinary, nil
	}
	return os.Executable()
}

// copyBinaries copies every binary the run measures (kreact's, the base
// builds', and this program, which runs the bare controllers) into dir,
// one after the other, and points the flags and selfBinary at the
// copies.
//
// Why: how a binary's file was written moves the figures measured of
// it. A file as the Go linker wrote it gave `kreact version` a peak RSS
// 2–10 MiB above that of a byte-identical copy of it, and an older file
// cost more CPU than a newer copy (docs/design/performance-history.md).
// Files written the same way, at the same moment, compare the code, not
// the files.
func copyBinaries(dir string, f *flags) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	paths := []*string{&f.kreact, &f.kreactBase, &f.manyBase, &exe}
	for i, p := range paths {
		if *p == "" {
			continue
		}
		dst := filepath.Join(dir, fmt.Sprintf("%d-%s", i, filepath.Base(*p)))
		if err := copyFile(*p, dst); err != nil {
			return fmt.Errorf("copy the binary %s: %w", *p, err)
		}
		*p = dst
	}
	selfBinary = exe
	return nil
}

// copyFile copies the executable file src to dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
