package main

import (
	"io/fs"
	"strings"
	"testing"
)

// TestHelp: every command prints its help from help/ and exits 0, and
// every file there is some command's help.
func TestHelp(t *testing.T) {
	used := map[string]bool{"kreact.txt": true}
	for _, args := range [][]string{{"run"}, {"watch"}, {"validate"}, {"test"}, {"record"}, {"preview"}, {"rbac"}, {"webhooks"}, {"finalizers"}, {"finalizers", "release"}, {"explain"}, {"version"}} {
		code, stdout, stderr := run(t, append(args, "--help")...)
		name := strings.Join(args, " ")
		if code != exitOK || !strings.HasPrefix(stdout, "Usage: kreact "+name) || stderr != "" {
			t.Errorf("kreact %s --help: %s", name, transcript(code, stdout, stderr))
		}
		used[strings.Join(args, "-")+".txt"] = true
	}
	if code, stdout, _ := run(t, "help"); code != exitOK || !strings.Contains(stdout, "  finalizers  release RULE") {
		t.Errorf("kreact help: exit %d, %s", code, stdout)
	}
	// `kreact help --help` once recursed until the stack overflowed.
	for _, args := range [][]string{{"help", "--help"}, {"help", "-h"}, {"--help", "help"}, {"help", "help"}} {
		if code, stdout, _ := run(t, args...); code != exitOK || !strings.Contains(stdout, "  finalizers  release RULE") {
			t.Errorf("kreact %s: exit %d, %s", strings.Join(args, " "), code, stdout)
		}
	}
	if code, stdout, _ := run(t, "help", "run"); code != exitOK || !strings.HasPrefix(stdout, "Usage: kreact run") {
		t.Errorf("kreact help run: exit %d, %s", code, stdout)
	}
	files, err := fs.ReadDir(helpFiles, "help")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !used[f.Name()] {
			t.Errorf("help/%s is no command's help", f.Name())
		}
	}
}
