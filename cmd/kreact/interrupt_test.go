package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateHonoursTheSignal: validate with its context ended (SIGTERM
// while rules load) stops without checking the rules.
func TestValidateHonoursTheSignal(t *testing.T) {
	dir := t.TempDir()
	for i := range 50 {
		rule := fmt.Sprintf("apiVersion: kreact.dev/v1alpha1\nkind: Rule\nmetadata: {name: r%d}\nspec:\n  watch: [{resource: configmaps}]\n  script: 'function onAdd() {}'\n", i)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("r%d.yaml", i)), []byte(rule), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var out, errOut strings.Builder
	err := parsed("validate", validateCmd)(ctx, []string{"-f", dir}, &out, &errOut)
	if !errors.Is(err, context.Canceled) || out.Len() > 0 {
		t.Fatalf("validate after SIGTERM = %v, stdout %q; want it interrupted, with no report", err, out.String())
	}
}
