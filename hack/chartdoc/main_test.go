package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestREADMEIsCurrent fails when charts/kreact/README.md's values table is
// not what values.schema.json and values.yaml say.
func TestREADMEIsCurrent(t *testing.T) {
	chart := filepath.Join("..", "..", "charts", "kreact")
	if err := run(chart, true); err != nil {
		t.Fatal(err)
	}
}

// TestStaleTableIsReported changes a description and expects -check to
// fail, and a run without -check to bring the README back in line.
func TestStaleTableIsReported(t *testing.T) {
	src := filepath.Join("..", "..", "charts", "kreact")
	dir := t.TempDir()
	for _, f := range []string{"README.md", "values.yaml", "values.schema.json"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "values.schema.json" {
			data = []byte(strings.Replace(string(data), "How many kreact pods run.", "How many pods of kreact run.", 1))
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := run(dir, true)
	if err == nil || !strings.Contains(err.Error(), "stale") {
		t.Fatalf("-check on a changed schema: %v, want a stale table", err)
	}
	if err := run(dir, false); err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "| `replicas` | integer | `2` | How many pods of kreact run.") {
		t.Errorf("README.md after the update lacks the new description:\n%s", readme)
	}
	if err := run(dir, true); err != nil {
		t.Errorf("-check after the update: %v", err)
	}
}

// TestUndocumentedValueIsRefused: a key in values.yaml that the schema
// does not describe would be refused by helm; chartdoc says so first.
func TestUndocumentedValueIsRefused(t *testing.T) {
	src := filepath.Join("..", "..", "charts", "kreact")
	dir := t.TempDir()
	for _, f := range []string{"README.md", "values.yaml", "values.schema.json"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			t.Fatal(err)
		}
		if f == "values.yaml" {
			data = append(data, "replicaCount: 3\n"...)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(dir, true); err == nil || !strings.Contains(err.Error(), "replicaCount is in values.yaml, not in values.schema.json") {
		t.Fatalf("got %v", err)
	}
}
