// Command plot draws the kreact dashboard's time series from a real run,
// as an SVG picture for docs/monitoring.md.
//
// It starts a control plane (internal/testcluster) and the kreact of this
// repository with the mixin's rules (package mixin's Live), makes
// ConfigMaps in waves for -duration (mixin.Load), scrapes /metrics every
// -interval into a Prometheus TSDB in a temporary folder, and evaluates
// every time-series panel's own expressions of monitoring/dashboard.json
// over it with the Prometheus query engine: the picture shows what the
// dashboard shows, with Grafana's variables set to "all".
//
//	cd hack/mixin && go run ./plot -out ../../docs/monitoring-dashboard.svg
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"regexp"
	"strings"
	"syscall"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/tsdb"
	"k8s.io/client-go/kubernetes"

	"github.com/kreact/kreact/hack/mixin"
	"github.com/kreact/kreact/internal/testcluster"
)

func main() {
	out := flag.String("out", "../../docs/monitoring-dashboard.svg", "the SVG file to write")
	duration := flag.Duration("duration", 4*time.Minute, "how long to load kreact")
	interval := flag.Duration("interval", time.Second, "how often to scrape /metrics")
	window := flag.String("rate-interval", "20s", "what the dashboard's $__rate_interval stands for")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *out, *duration, *interval, *window); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, out string, duration, interval time.Duration, window string) error {
	tmp, err := os.MkdirTemp("", "kreact-plot-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	log.Print("starting the control plane")
	cluster, err := testcluster.Start(testcluster.Options{})
	if err != nil {
		return err
	}
	defer cluster.Stop()
	log.Print("building kreact")
	bin, err := mixin.Build(tmp)
	if err != nil {
		return err
	}
	rules := tmp + "/rules"
	if err := os.Mkdir(rules, 0o755); err != nil {
		return err
	}
	live, err := mixin.Start(ctx, bin, cluster.KubeconfigPath(), rules)
	if err != nil {
		return err
	}
	defer live.Stop()
	db, err := tsdb.Open(tmp+"/tsdb", nil, nil, tsdb.DefaultOptions(), nil)
	if err != nil {
		return fmt.Errorf("open tsdb: %w", err)
	}
	defer db.Close()

	cs := kubernetes.NewForConfigOrDie(cluster.Config())
	loadCtx, stopLoad := context.WithTimeout(ctx, duration)
	defer stopLoad()
	loadDone := make(chan error, 1)
	go func() { loadDone <- load(loadCtx, cs) }()

	log.Printf("loading kreact for %s, scraping every %s", duration, interval)
	start := time.Now()
	// A minute of calm after the load shows the queues drain.
	end := start.Add(duration + time.Minute)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for now := start; now.Before(end); now = <-tick.C {
		if err := scrapeInto(ctx, live, db, now); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
	}
	if err := <-loadDone; err != nil && loadCtx.Err() == nil {
		return err
	}

	d, err := mixin.ReadDashboard()
	if err != nil {
		return err
	}
	engine := promql.NewEngine(promql.EngineOpts{MaxSamples: 50_000_000, Timeout: time.Minute, LookbackDelta: 5 * time.Minute})
	intervalVar := regexp.MustCompile(`\$__(rate_interval|interval)\b`)
	var charts []chart
	row := ""
	for _, p := range d.Panels {
		if p.Type == "row" {
			row = p.Title
		}
		if p.Type != "timeseries" {
			continue
		}
		c := chart{Title: row + " · " + p.Title, Unit: p.FieldConfig.Defaults.Unit}
		for _, t := range p.Targets {
			q := mixin.Substitute(intervalVar.ReplaceAllString(t.Expr, window))
			qry, err := engine.NewRangeQuery(ctx, db, nil, q, start.Add(20*time.Second), end, 2*time.Second)
			if err != nil {
				return fmt.Errorf("panel %q: %w", p.Title, err)
			}
			res := qry.Exec(ctx)
			if res.Err != nil {
				return fmt.Errorf("panel %q: %s: %w", p.Title, q, res.Err)
			}
			m, err := res.Matrix()
			if err != nil {
				return fmt.Errorf("panel %q: %w", p.Title, err)
			}
			for _, s := range m {
				var pts []point
				for _, f := range s.Floats {
					pts = append(pts, point{T: float64(f.T-start.UnixMilli()) / 1000, V: f.F})
				}
				c.Series = append(c.Series, series{Name: legend(t.LegendFormat, s.Metric), Points: pts})
			}
			qry.Close()
		}
		charts = append(charts, c)
	}
	svg := render(charts, (duration + time.Minute).Seconds())
	if err := os.WriteFile(out, []byte(svg), 0o644); err != nil {
		return err
	}
	log.Printf("wrote %s (%d panels)", out, len(charts))
	return nil
}

// load makes ConfigMaps in waves of different sizes until ctx ends.
func load(ctx context.Context, cs kubernetes.Interface) error {
	sizes := []int{10, 40, 20, 80, 30, 60}
	for i := 0; ctx.Err() == nil; i++ {
		if err := mixin.Load(ctx, cs, fmt.Sprintf("wave%d", i), sizes[i%len(sizes)]); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Second):
		}
	}
	return nil
}

var targetLabels = labels.FromStrings("job", "kreact", "instance", "kreact-0")

// scrapeInto appends one scrape of /metrics at now to db, with the
// target labels Prometheus would add, as Prometheus stores a scrape.
func scrapeInto(ctx context.Context, live *mixin.Live, db *tsdb.DB, now time.Time) error {
	text, err := live.Scrape(ctx)
	if err != nil {
		return err
	}
	tp := expfmt.NewTextParser(model.UTF8Validation)
	families, err := tp.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		return fmt.Errorf("parse /metrics: %w", err)
	}
	app := db.Appender(ctx)
	ts := now.UnixMilli()
	add := func(name string, m *dto.Metric, v float64, extra ...string) error {
		b := labels.NewBuilder(targetLabels)
		b.Set(labels.MetricName, name)
		for _, l := range m.GetLabel() {
			b.Set(l.GetName(), l.GetValue())
		}
		for i := 0; i < len(extra); i += 2 {
			b.Set(extra[i], extra[i+1])
		}
		_, err := app.Append(0, b.Labels(), ts, v)
		return err
	}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			var err error
			switch mf.GetType() {
			case dto.MetricType_COUNTER:
				err = add(name, m, m.GetCounter().GetValue())
			case dto.MetricType_GAUGE:
				err = add(name, m, m.GetGauge().GetValue())
			case dto.MetricType_UNTYPED:
				err = add(name, m, m.GetUntyped().GetValue())
			case dto.MetricType_HISTOGRAM:
				h := m.GetHistogram()
				for _, b := range h.GetBucket() {
					if err = add(name+"_bucket", m, float64(b.GetCumulativeCount()), "le", model.FloatString(b.GetUpperBound()).String()); err != nil {
						break
					}
				}
				if err == nil {
					err = add(name+"_bucket", m, float64(h.GetSampleCount()), "le", "+Inf")
				}
				if err == nil {
					err = add(name+"_sum", m, h.GetSampleSum())
				}
				if err == nil {
					err = add(name+"_count", m, float64(h.GetSampleCount()))
				}
			}
			if err != nil {
				_ = app.Rollback()
				return fmt.Errorf("append %s: %w", name, err)
			}
		}
	}
	return app.Commit()
}

var legendVar = regexp.MustCompile(`\{\{\s*(\w+)\s*\}\}`)

// legend fills a Grafana legend format with the series' labels.
func legend(format string, l labels.Labels) string {
	if format == "" {
		return l.String()
	}
	return legendVar.ReplaceAllStringFunc(format, func(m string) string {
		return l.Get(legendVar.FindStringSubmatch(m)[1])
	})
}
