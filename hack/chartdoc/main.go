package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"
)

const (
	begin = "<!-- values:begin -->\n"
	end   = "<!-- values:end -->"
)

func main() {
	chart := flag.String("chart", "charts/kreact", "the chart's folder")
	check := flag.Bool("check", false, "only report whether README.md's table is current")
	flag.Parse()
	if err := run(*chart, *check); err != nil {
		fmt.Fprintln(os.Stderr, "chartdoc:", err)
		os.Exit(1)
	}
}

func run(chart string, check bool) error {
	readme := filepath.Join(chart, "README.md")
	old, err := os.ReadFile(readme)
	if err != nil {
		return err
	}
	table, err := Table(chart)
	if err != nil {
		return err
	}
	updated, err := splice(old, table)
	if err != nil {
		return fmt.Errorf("%s: %w", readme, err)
	}
	if bytes.Equal(old, updated) {
		return nil
	}
	if check {
		return fmt.Errorf("%s: the values table is stale; run go run ./hack/chartdoc", readme)
	}
	return os.WriteFile(readme, updated, 0o644)
}

// splice replaces what lies between the markers with table.
func splice(readme []byte, table string) ([]byte, error) {
	s := string(readme)
	i := strings.Index(s, begin)
	j := strings.Index(s, end)
	if i < 0 || j < i {
		return nil, fmt.Errorf("no %q … %q markers", strings.TrimSpace(begin), end)
	}
	return []byte(s[:i+len(begin)] + table + s[j:]), nil
}

// schema is the part of a JSON schema the table shows.
type schema struct {
	Description          string             `json:"description"`
	Type                 any                `json:"type"`
	Enum                 []any              `json:"enum"`
	Properties           map[string]*schema `json:"properties"`
	AdditionalProperties any                `json:"additionalProperties"`
}

// Table is the Markdown table of every value the schema describes: one
// row per leaf, per object whose keys are free (rules, labels) and per
// object the schema describes as a whole (resources).
func Table(chart string) (string, error) {
	raw, err := os.ReadFile(filepath.Join(chart, "values.schema.json"))
	if err != nil {
		return "", err
	}
	var root schema
	if err := json.Unmarshal(raw, &root); err != nil {
		return "", fmt.Errorf("values.schema.json: %w", err)
	}
	raw, err = os.ReadFile(filepath.Join(chart, "values.yaml"))
	if err != nil {
		return "", err
	}
	var defaults map[string]any
	if err := yaml.Unmarshal(raw, &defaults); err != nil {
		return "", fmt.Errorf("values.yaml: %w", err)
	}
	var b strings.Builder
	b.WriteString("| Key | Type | Default | Description |\n|---|---|---|---|\n")
	if err := rows(&b, "", &root, defaults); err != nil {
		return "", err
	}
	return b.String(), nil
}

func rows(b *strings.Builder, prefix string, s *schema, defaults map[string]any) error {
	keys := make([]string, 0, len(s.Properties))
	for k := range s.Properties {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		p := s.Properties[k]
		path := prefix + k
		def, inValues := defaults[k]
		if !inValues && k != "global" {
			return fmt.Errorf("%s is in values.schema.json, not in values.yaml", path)
		}
		// An object with a description of its own is one row; one
		// without is the rows of its keys.
		if len(p.Properties) > 0 && p.Description == "" {
			sub, _ := def.(map[string]any)
			if err := rows(b, path+".", p, sub); err != nil {
				return err
			}
			continue
		}
		if k == "global" {
			continue
		}
		if p.Description == "" {
			return fmt.Errorf("%s has no description in values.schema.json", path)
		}
		d, err := json.Marshal(def)
		if err != nil {
			return err
		}
		desc := strings.ReplaceAll(p.Description, "|", `\|`)
		fmt.Fprintf(b, "| `%s` | %s | `%s` | %s |\n", path, typeOf(p), d, desc)
	}
	for k := range defaults {
		if _, ok := s.Properties[k]; !ok && len(s.Properties) > 0 {
			return fmt.Errorf("%s%s is in values.yaml, not in values.schema.json", prefix, k)
		}
	}
	return nil
}

func typeOf(s *schema) string {
	var types []string
	switch t := s.Type.(type) {
	case string:
		types = []string{t}
	case []any:
		for _, x := range t {
			types = append(types, fmt.Sprint(x))
		}
	}
	out := strings.Join(types, " or ")
	if len(s.Enum) > 0 {
		var vals []string
		for _, v := range s.Enum {
			vals = append(vals, fmt.Sprint(v))
		}
		out += " (" + strings.Join(vals, ", ") + ")"
	}
	return out
}
