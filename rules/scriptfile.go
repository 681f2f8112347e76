package rules

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// readScriptFile reads spec.scriptFile name of the rule file ruleFile. The
// script must be a regular file under the rule file's directory, reached
// by a relative path; symbolic links are followed (a ConfigMap mount is
// made of them) but must stay under that directory too. It returns the
// path as opened. Errors quote nothing of the file: a rule must not be a
// way to read other files through kreact's messages.
func readScriptFile(ruleFile, name string) (string, string, error) {
	if filepath.IsAbs(name) {
		return "", "", fmt.Errorf("%s: want a path relative to the rule file, not an absolute one", quoteShort(name))
	}
	if c := filepath.Clean(name); c == ".." || strings.HasPrefix(c, ".."+string(filepath.Separator)) {
		return "", "", fmt.Errorf("%s is outside the rule file's directory", quoteShort(name))
	}
	dir := filepath.Dir(ruleFile)
	path := filepath.Join(dir, name)
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", path, fmt.Errorf("cannot resolve the rule file's directory %s: %w", dir, unwrapPath(err))
	}
	realPath, err := filepath.EvalSymlinks(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", path, fmt.Errorf("script file %s does not exist", path)
	case err != nil:
		return "", path, fmt.Errorf("cannot resolve script file %s: %w", path, unwrapPath(err))
	}
	if rel, err := filepath.Rel(realDir, realPath); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", path, fmt.Errorf("script file %s is outside the rule file's directory %s", path, dir)
	}
	// O_NONBLOCK: a FIFO swapped in after the check below must not hang
	// the loader in open.
	f, err := os.OpenFile(realPath, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", path, fmt.Errorf("cannot read script file %s: %w", path, unwrapPath(err))
	}
	defer f.Close()
	info, err := f.Stat()
	switch {
	case err != nil:
		return "", path, fmt.Errorf("cannot read script file %s: %w", path, unwrapPath(err))
	case !info.Mode().IsRegular():
		return "", path, fmt.Errorf("script file %s is not a regular file", path)
	case info.Size() > MaxScriptSize:
		return "", path, fmt.Errorf("script file %s is %d bytes, over the limit of %d", path, info.Size(), MaxScriptSize)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxScriptSize+1))
	if err != nil {
		return "", path, fmt.Errorf("cannot read script file %s: %w", path, unwrapPath(err))
	}
	if len(data) > MaxScriptSize {
		return "", path, fmt.Errorf("script file %s is over the limit of %d bytes", path, MaxScriptSize)
	}
	return string(data), path, nil
}

func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// quoteShort quotes s for a message, cut to a length that fits a line.
func quoteShort(s string) string {
	const max = 200
	if len(s) > max {
		return fmt.Sprintf("%q… (%d bytes)", s[:max], len(s))
	}
	return fmt.Sprintf("%q", s)
}
