package main

import (
	"fmt"
	"html"
	"math"
	"strings"
)

type point struct{ T, V float64 }

type series struct {
	Name   string
	Points []point
}

// chart is one dashboard panel: its series over the run.
type chart struct {
	Title, Unit string
	Series      []series
}

// Grafana's classic palette, so the picture looks like the dashboard.
var palette = []string{"#7eb26d", "#eab839", "#6ed0e0", "#ef843c", "#e24d42", "#1f78c1", "#ba43a9", "#705da0", "#508642", "#cca300"}

const (
	cols           = 3
	cellW, cellH   = 420, 300
	plotX, plotY   = 72, 34
	plotW, plotH   = 330, 150
	legendLines    = 6
	legendLineStep = 14
)

// render draws the charts in a grid of small multiples over seconds
// 0..span, in a dark theme like Grafana's.
func render(charts []chart, span float64) string {
	rows := (len(charts) + cols - 1) / cols
	w, h := cols*cellW, rows*cellH+40
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="Inter, Helvetica, Arial, sans-serif" font-size="11">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="#111217"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="12" y="26" fill="#ccccdc" font-size="16">kreact dashboard (monitoring/dashboard.json): a run against a local control plane, %.0f minutes, time in seconds</text>`+"\n", span/60)
	for i, c := range charts {
		x0, y0 := (i%cols)*cellW, 40+(i/cols)*cellH
		drawChart(&b, c, x0, y0, span)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func drawChart(b *strings.Builder, c chart, x0, y0 int, span float64) {
	fmt.Fprintf(b, `<g transform="translate(%d,%d)">`+"\n", x0, y0)
	fmt.Fprintf(b, `<rect x="4" y="4" width="%d" height="%d" rx="3" fill="#181b1f" stroke="#2b2f36"/>`+"\n", cellW-8, cellH-8)
	fmt.Fprintf(b, `<text x="14" y="22" fill="#ccccdc" font-size="12" font-weight="600">%s</text>`+"\n", html.EscapeString(c.Title))
	maxV := 0.0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !math.IsNaN(p.V) && !math.IsInf(p.V, 0) {
				maxV = math.Max(maxV, p.V)
			}
		}
	}
	top := niceCeil(maxV)
	// Axes and grid: four horizontal lines, time ticks every minute.
	for i := 0; i <= 4; i++ {
		y := plotY + plotH - plotH*i/4
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#2b2f36"/>`+"\n", plotX, y, plotX+plotW, y)
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#8e8e8e" text-anchor="end">%s</text>`+"\n", plotX-4, y+4, html.EscapeString(format(top*float64(i)/4, c.Unit)))
	}
	for t := 0.0; t <= span; t += 60 {
		x := plotX + int(t/span*plotW)
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#8e8e8e" text-anchor="middle">%.0f</text>`+"\n", x, plotY+plotH+14, t)
	}
	if len(c.Series) == 0 {
		fmt.Fprintf(b, `<text x="%d" y="%d" fill="#8e8e8e" text-anchor="middle">no data</text>`+"\n", plotX+plotW/2, plotY+plotH/2)
	}
	for i, s := range c.Series {
		color := palette[i%len(palette)]
		var path strings.Builder
		pen := "M"
		for _, p := range s.Points {
			if math.IsNaN(p.V) || math.IsInf(p.V, 0) {
				pen = "M"
				continue
			}
			x := float64(plotX) + p.T/span*plotW
			y := float64(plotY+plotH) - p.V/top*plotH
			fmt.Fprintf(&path, "%s%.1f %.1f ", pen, x, y)
			pen = "L"
		}
		fmt.Fprintf(b, `<path d="%s" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", strings.TrimSpace(path.String()), color)
		if i < legendLines {
			name := s.Name
			if i == legendLines-1 && len(c.Series) > legendLines {
				name = fmt.Sprintf("… and %d more", len(c.Series)-i)
			}
			ly := plotY + plotH + 30 + i*legendLineStep
			fmt.Fprintf(b, `<rect x="%d" y="%d" width="10" height="3" fill="%s"/>`+"\n", plotX, ly-4, color)
			fmt.Fprintf(b, `<text x="%d" y="%d" fill="#ccccdc">%s</text>`+"\n", plotX+16, ly, html.EscapeString(truncate(name, 58)))
		}
	}
	b.WriteString("</g>\n")
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten (1 for 0).
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// format writes v in the panel's unit, short like Grafana's axes.
func format(v float64, unit string) string {
	switch unit {
	case "bytes":
		for _, u := range []string{"B", "KiB", "MiB", "GiB"} {
			if v < 1024 || u == "GiB" {
				return trim(v) + " " + u
			}
			v /= 1024
		}
	case "s":
		switch {
		case v == 0:
			return "0"
		case v < 0.001:
			return trim(v*1e6) + " µs"
		case v < 1:
			return trim(v*1e3) + " ms"
		}
		return trim(v) + " s"
	case "ops":
		return trim(v) + "/s"
	case "percentunit":
		return trim(v*100) + "%"
	}
	return trim(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}
