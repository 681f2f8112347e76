// Package mixin checks and pictures kreact's monitoring mixin (the Grafana
// dashboard and the Prometheus alerts in monitoring/) against a live
// kreact.
//
// It is a Go module of its own because the PromQL parser and engine come
// with the Prometheus server's module, whose requirements the product's
// go.mod should not carry; the kreact it runs is built from the
// repository's own module (Build), so it is the binary make build makes.
//
// Live starts that kreact against a control plane (internal/testcluster)
// with rules chosen so that every metric family the mixin uses has
// series: a rule that acts, one whose calls are given up, one with a
// finalizer, one that answers admission requests, and --shards so that
// the shard gauges appear. Load makes changes for them to react to. The
// test (mixin_e2e_test.go) parses every expression of the mixin with the
// PromQL parser and checks its metric names and labels against what that
// kreact's /metrics serves, so a renamed metric or label fails it; the
// program in plot/ runs the same kreact under load, evaluates the
// dashboard's expressions on what it scraped and draws them as an SVG
// picture for docs/monitoring.md.
package mixin
