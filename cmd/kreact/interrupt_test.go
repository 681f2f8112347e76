package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestInterruptibleEndsWithTheContext: a load that never finishes does
// not keep a signal waiting.
func TestInterruptibleEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	block := make(chan struct{})
	defer close(block)
	done := make(chan error, 1)
	go func() {
		_, err := interruptible(ctx, "loading", func() int { <-block; return 1 })
		done <- err
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "loading: interrupted") {
			t.Fatalf("err = %v, want loading: interrupted: context canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("interruptible waits for f after its context ended")
	}
	if v, err := interruptible(t.Context(), "loading", func() int { return 7 }); v != 7 || err != nil {
		t.Fatalf("= %d, %v; want 7, nil", v, err)
	}
}

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
	err := validateCmd(ctx, []string{"-f", dir}, &out, &errOut)
	if !errors.Is(err, context.Canceled) || out.Len() > 0 {
		t.Fatalf("validate after SIGTERM = %v, stdout %q; want it interrupted, with no report", err, out.String())
	}
}
