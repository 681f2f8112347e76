package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/kreact/kreact/metrics"
)

// TestMetricsDocumented checks the table of operations.md#metrics
// against the metrics kreact registers: every kreact_ metric has a row
// with its labels, and every row names a registered metric with those
// labels. A row may stand for a family (kreact_workqueue_*{name}).
func TestMetricsDocumented(t *testing.T) {
	registered := registeredMetrics(t)
	if len(registered) == 0 {
		t.Fatal("no kreact_ metric is registered: the Desc parser is broken")
	}
	rows := metricRows(t)
	if len(rows) == 0 {
		t.Fatal("docs/operations.md has no metrics table under ## Metrics")
	}
	for name, labels := range registered {
		row, ok := rows[name]
		for pattern, l := range rows {
			if prefix, wild := strings.CutSuffix(pattern, "*"); wild && strings.HasPrefix(name, prefix) {
				row, ok = l, true
			}
		}
		if !ok {
			t.Errorf("docs/operations.md#metrics has no row for %s{%s}", name, labels)
		} else if row != labels {
			t.Errorf("docs/operations.md#metrics: %s{%s}, but kreact registers it with {%s}", name, row, labels)
		}
	}
	for pattern := range rows {
		prefix, wild := strings.CutSuffix(pattern, "*")
		found := false
		for name := range registered {
			found = found || name == pattern || (wild && strings.HasPrefix(name, prefix))
		}
		if !found {
			t.Errorf("docs/operations.md#metrics: %s is not a metric kreact registers", pattern)
		}
	}
}

// TestMetricNamesInDocs checks that every kreact_ metric name the user
// docs write exists. Names ending in _ are the prefixes of queue names
// (kreact_rule_RULE), not metrics.
func TestMetricNamesInDocs(t *testing.T) {
	registered := registeredMetrics(t)
	name := regexp.MustCompile(`\bkreact_[a-z_]*[a-z]\b`)
	// A histogram's series add these to its name.
	suffix := regexp.MustCompile(`_(bucket|count|sum)$`)
	for _, d := range userDocs(t) {
		for i, line := range strings.Split(d.text, "\n") {
			for _, n := range name.FindAllString(line, -1) {
				if _, ok := registered[n]; !ok {
					if _, ok := registered[suffix.ReplaceAllString(n, "")]; !ok {
						t.Errorf("%s:%d: %s is not a metric kreact registers", d.name, i+1, n)
					}
				}
			}
		}
	}
}

// registeredMetrics returns the kreact_ metrics of a metrics.Recorder, by
// name, each with its labels joined by commas.
func registeredMetrics(t *testing.T) map[string]string {
	t.Helper()
	r := metrics.New()
	ch := make(chan *prometheus.Desc)
	go func() {
		r.Registry().Describe(ch)
		close(ch)
	}()
	// Desc has no accessors; its String is
	// Desc{fqName: "…", help: "…", constLabels: {…}, variableLabels: {a,b}}.
	desc := regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*variableLabels: \{([^}]*)\}\}$`)
	names := map[string]string{}
	for d := range ch {
		m := desc.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the metric description %s", d)
		}
		if strings.HasPrefix(m[1], "kreact_") {
			labels := strings.Split(m[2], ",")
			slices.Sort(labels)
			names[m[1]] = strings.Join(labels, ",")
		}
	}
	return names
}

// metricRows returns the metrics of the table under ## Metrics in
// docs/operations.md, each with its labels joined by commas.
func metricRows(t *testing.T) map[string]string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "docs", "operations.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `(kreact_[a-z_*]+)(?:\\{([a-z,]*)\\})?` \\|")
	rows := map[string]string{}
	for _, l := range strings.Split(section(string(data), "## Metrics"), "\n") {
		if m := row.FindStringSubmatch(l); m != nil {
			if _, dup := rows[m[1]]; dup {
				t.Errorf("docs/operations.md#metrics: %s has two rows", m[1])
			}
			labels := strings.Split(m[2], ",")
			slices.Sort(labels)
			rows[m[1]] = strings.Join(labels, ",")
		}
	}
	return rows
}
