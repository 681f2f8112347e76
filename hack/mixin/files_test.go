package mixin

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite monitoring/prometheusrule.yaml from monitoring/alerts.yaml")

// prometheusRule is alerts.yaml's groups as a PrometheusRule.
func prometheusRule(alerts []byte) []byte {
	var b strings.Builder
	b.WriteString(`# Generated from alerts.yaml by hack/mixin (go test -run TestPrometheusRule
# -update); edit alerts.yaml, not this file.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: kreact
  labels:
    app.kubernetes.io/name: kreact
spec:
`)
	inBody := false
	for line := range strings.SplitSeq(strings.TrimSuffix(string(alerts), "\n"), "\n") {
		// alerts.yaml's leading comment is about that file.
		if !inBody && (strings.HasPrefix(line, "#") || line == "") {
			continue
		}
		inBody = true
		if line == "" {
			b.WriteString("\n")
			continue
		}
		b.WriteString("  " + line + "\n")
	}
	return []byte(b.String())
}

// TestPrometheusRule: monitoring/prometheusrule.yaml is alerts.yaml's
// rules, so the two cannot drift; -update rewrites it.
func TestPrometheusRule(t *testing.T) {
	alerts, err := os.ReadFile(filepath.Join(Dir, "alerts.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	want := prometheusRule(alerts)
	path := filepath.Join(Dir, "prometheusrule.yaml")
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != string(want) {
		t.Errorf("%s is not alerts.yaml's rules; run: cd hack/mixin && go test -run TestPrometheusRule -update", path)
	}
}

// TestAlertsHaveRunbooks: every alert has a severity, a summary and a
// description, and a runbook_url whose anchor is a section of
// docs/monitoring.md; every panel has a title, a description and
// expressions.
func TestAlertsHaveRunbooks(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "monitoring.md"))
	if err != nil {
		t.Fatal(err)
	}
	anchors := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(doc), -1) {
		anchors[anchor(m[1])] = true
	}
	rules, err := ReadRules()
	if err != nil {
		t.Fatal(err)
	}
	const base = "https://github.com/kreact/kreact/blob/main/docs/monitoring.md#"
	n := 0
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			n++
			if s := r.Labels["severity"]; s != "warning" && s != "critical" {
				t.Errorf("alert %s: severity %q, want warning or critical", r.Alert, s)
			}
			if r.Annotations["summary"] == "" || r.Annotations["description"] == "" {
				t.Errorf("alert %s: no summary or description", r.Alert)
			}
			url := r.Annotations["runbook_url"]
			if a, ok := strings.CutPrefix(url, base); !ok || !anchors[a] {
				t.Errorf("alert %s: runbook_url %q is not %s followed by a heading of docs/monitoring.md", r.Alert, url, base)
			}
		}
	}
	if n == 0 {
		t.Error("alerts.yaml has no alert")
	}
	d, err := ReadDashboard()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range d.Panels {
		if p.Type == "row" {
			continue
		}
		if p.Title == "" || len(p.Targets) == 0 {
			t.Errorf("dashboard panel %q has no title or no target", p.Title)
		}
		for _, tg := range p.Targets {
			if strings.TrimSpace(tg.Expr) == "" {
				t.Errorf("dashboard panel %q has a target without expression", p.Title)
			}
		}
	}
}

// anchor is a heading's anchor as GitHub makes it (docs/links_test.go's
// rule): lower case, spaces as dashes, punctuation other than - and _
// dropped.
func anchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
		}
	}
	return b.String()
}
