package mixin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"sigs.k8s.io/yaml"
)

// Dir is the mixin's folder, from this package's.
var Dir = filepath.Join("..", "..", "monitoring")

// Expr is one PromQL expression of the mixin.
type Expr struct {
	// Where names it: the dashboard panel and target, or the alert.
	Where string
	// Query is the expression with Grafana's variables replaced
	// (Substitute), ready to parse.
	Query string
	// Legend is a dashboard target's legend format ("" for alerts).
	Legend string
}

// Dashboard is the part of a Grafana dashboard the mixin's checks read.
type Dashboard struct {
	Title      string  `json:"title"`
	Panels     []Panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
}

// Panel is one panel of a Dashboard.
type Panel struct {
	Type    string `json:"type"`
	Title   string `json:"title"`
	Targets []struct {
		Expr         string `json:"expr"`
		LegendFormat string `json:"legendFormat"`
	} `json:"targets"`
	FieldConfig struct {
		Defaults struct {
			Unit string `json:"unit"`
		} `json:"defaults"`
	} `json:"fieldConfig"`
}

// AlertRules is a Prometheus rules file.
type AlertRules struct {
	Groups []struct {
		Name  string `json:"name"`
		Rules []Rule `json:"rules"`
	} `json:"groups"`
}

// Rule is one alerting rule.
type Rule struct {
	Alert       string            `json:"alert"`
	Expr        string            `json:"expr"`
	For         string            `json:"for,omitempty"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

// ReadDashboard reads monitoring/dashboard.json.
func ReadDashboard() (*Dashboard, error) {
	data, err := os.ReadFile(filepath.Join(Dir, "dashboard.json"))
	if err != nil {
		return nil, err
	}
	var d Dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		return nil, fmt.Errorf("dashboard.json: %w", err)
	}
	return &d, nil
}

// ReadRules reads monitoring/alerts.yaml, strictly: a misspelt field is an
// error.
func ReadRules() (*AlertRules, error) {
	data, err := os.ReadFile(filepath.Join(Dir, "alerts.yaml"))
	if err != nil {
		return nil, err
	}
	var r AlertRules
	if err := yaml.UnmarshalStrict(data, &r); err != nil {
		return nil, fmt.Errorf("alerts.yaml: %w", err)
	}
	return &r, nil
}

var (
	intervalVar = regexp.MustCompile(`\$__(rate_interval|interval|range)\b`)
	otherVar    = regexp.MustCompile(`\$\{?\w+\}?`)
	labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)
)

// Substitute replaces Grafana's variables in a query: the intervals by
// 5m, any other variable (a regular expression in the mixin's matchers)
// by ".*".
func Substitute(q string) string {
	q = intervalVar.ReplaceAllString(q, "5m")
	return otherVar.ReplaceAllString(q, ".*")
}

// Exprs returns every expression of the dashboard and the alerts. A
// template variable's label_values(SELECTOR, LABEL) becomes
// `count by (LABEL) (SELECTOR)`, which uses the same metric and label.
func Exprs() ([]Expr, error) {
	d, err := ReadDashboard()
	if err != nil {
		return nil, err
	}
	r, err := ReadRules()
	if err != nil {
		return nil, err
	}
	var out []Expr
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(strings.TrimSpace(s))
		if m == nil {
			return nil, fmt.Errorf("dashboard variable %s: query %q is not label_values(SELECTOR, LABEL)", v.Name, s)
		}
		out = append(out, Expr{Where: "dashboard variable " + v.Name, Query: Substitute(fmt.Sprintf("count by (%s) (%s)", m[2], m[1]))})
	}
	for _, p := range d.Panels {
		for i, t := range p.Targets {
			out = append(out, Expr{Where: fmt.Sprintf("dashboard panel %q target %d", p.Title, i), Query: Substitute(t.Expr), Legend: t.LegendFormat})
		}
	}
	for _, g := range r.Groups {
		for _, a := range g.Rules {
			out = append(out, Expr{Where: "alert " + a.Alert, Query: a.Expr})
		}
	}
	return out, nil
}
