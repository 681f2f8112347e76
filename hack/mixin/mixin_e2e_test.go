//go:build e2e

package mixin

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"k8s.io/client-go/kubernetes"
)

// targetLabels are the labels Prometheus adds to every series it scrapes:
// the mixin may select and group by them though /metrics does not have
// them.
var targetLabels = []string{"job", "instance"}

// TestMixinMatchesLiveMetrics parses every expression of the dashboard and
// the alerts with the PromQL parser, and checks that each metric it selects
// is served by a live kreact's /metrics, and each label it matches or
// groups by is a label of those series: a renamed metric or label fails
// here. The kreact is the repository's, with rules that make every family
// the mixin uses appear (Live, Load).
func TestMixinMatchesLiveMetrics(t *testing.T) {
	exprs, err := Exprs()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := Build(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	live, err := Start(t.Context(), bin, cluster.KubeconfigPath(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		live.Stop()
		if t.Failed() {
			t.Logf("kreact's log:\n%s", live.Log)
		}
	})
	if err := Load(t.Context(), kubernetes.NewForConfigOrDie(cluster.Config()), "mixin", 20); err != nil {
		t.Fatal(err)
	}

	// Every metric the mixin names must appear; the load makes them,
	// and they appear as its changes are handled.
	used := map[string]bool{}
	for _, e := range exprs {
		parsed, err := parser.NewParser(parser.Options{}).ParseExpr(e.Query)
		if err != nil {
			t.Errorf("%s: %v\n%s", e.Where, err, e.Query)
			continue
		}
		for _, vs := range selectors(parsed) {
			used[metricName(vs)] = true
		}
	}
	var families map[string]map[string]bool
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	for {
		families = scrape(t, live)
		missing := absent(used, families)
		if len(missing) == 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("metrics the mixin uses that kreact's /metrics does not serve: %v", missing)
		case <-time.After(200 * time.Millisecond):
		}
	}

	for _, e := range exprs {
		parsed, err := parser.NewParser(parser.Options{}).ParseExpr(e.Query)
		if err != nil {
			continue // reported above
		}
		for _, problem := range check(parsed, families) {
			t.Errorf("%s: %s\n%s", e.Where, problem, e.Query)
		}
	}
}

// scrape reads /metrics into the label names of each series name, the
// way Prometheus stores them: a histogram is NAME_bucket (with le),
// NAME_sum and NAME_count.
func scrape(t *testing.T, live *Live) map[string]map[string]bool {
	t.Helper()
	text, err := live.Scrape(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	tp := expfmt.NewTextParser(model.UTF8Validation)
	parsed, err := tp.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	out := map[string]map[string]bool{}
	add := func(name string, m *dto.Metric, extra ...string) {
		if out[name] == nil {
			out[name] = map[string]bool{}
		}
		for _, l := range m.GetLabel() {
			out[name][l.GetName()] = true
		}
		for _, l := range extra {
			out[name][l] = true
		}
	}
	for name, mf := range parsed {
		for _, m := range mf.GetMetric() {
			switch mf.GetType() {
			case dto.MetricType_HISTOGRAM:
				add(name+"_bucket", m, "le")
				add(name+"_sum", m)
				add(name+"_count", m)
			case dto.MetricType_SUMMARY:
				add(name, m, "quantile")
				add(name+"_sum", m)
				add(name+"_count", m)
			default:
				add(name, m)
			}
		}
	}
	return out
}

func absent(used map[string]bool, families map[string]map[string]bool) []string {
	var missing []string
	for name := range used {
		if families[name] == nil {
			missing = append(missing, name)
		}
	}
	slices.Sort(missing)
	return missing
}

// selectors returns the vector selectors under node.
func selectors(node parser.Node) []*parser.VectorSelector {
	var out []*parser.VectorSelector
	parser.Inspect(node, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok {
			out = append(out, vs)
		}
		return nil
	})
	return out
}

func metricName(vs *parser.VectorSelector) string {
	if vs.Name != "" {
		return vs.Name
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == labels.MetricName && m.Type == labels.MatchEqual {
			return m.Value
		}
	}
	return ""
}

// labelsOf returns the label names the series selected under node can
// have: those of their families, and the target labels.
func labelsOf(node parser.Node, families map[string]map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, l := range targetLabels {
		out[l] = true
	}
	for _, vs := range selectors(node) {
		maps.Copy(out, families[metricName(vs)])
	}
	return out
}

// check returns what in expr does not match the live families: a metric
// not served, a matcher on a label its series lack, a by/without, on or
// ignoring label none of the series under it has.
func check(expr parser.Expr, families map[string]map[string]bool) []string {
	var problems []string
	parser.Inspect(expr, func(n parser.Node, _ []parser.Node) error {
		switch n := n.(type) {
		case *parser.VectorSelector:
			name := metricName(n)
			have, ok := families[name]
			if !ok {
				problems = append(problems, "metric "+name+" is not in kreact's /metrics")
				return nil
			}
			for _, m := range n.LabelMatchers {
				if m.Name != labels.MetricName && !have[m.Name] && !slices.Contains(targetLabels, m.Name) {
					problems = append(problems, "metric "+name+" has no label "+m.Name)
				}
			}
		case *parser.AggregateExpr:
			have := labelsOf(n.Expr, families)
			for _, l := range n.Grouping {
				if !have[l] {
					problems = append(problems, n.Op.String()+" by/without label "+l+" is on none of the series it aggregates")
				}
			}
		case *parser.BinaryExpr:
			vm := n.VectorMatching
			if vm == nil {
				return nil
			}
			left, right := labelsOf(n.LHS, families), labelsOf(n.RHS, families)
			for _, l := range vm.MatchingLabels {
				// on(l) matches on both sides; ignoring(l) needs it on one.
				if vm.On && !(left[l] && right[l]) || !vm.On && !left[l] && !right[l] {
					problems = append(problems, "on/ignoring label "+l+" is not on the series of both sides")
				}
			}
			for _, l := range vm.Include {
				if !left[l] && !right[l] {
					problems = append(problems, "group_left/group_right label "+l+" is on no side's series")
				}
			}
		}
		return nil
	})
	return problems
}
