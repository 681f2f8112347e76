// Command chartdoc writes the values table of charts/kreact/README.md from
// the chart's values.schema.json (each key's description and type) and
// values.yaml (its default), between the README's markers
//
//	<!-- values:begin --> and <!-- values:end -->
//
// so that the table and the schema Helm checks values against are one
// source. Run from the repository root: go run ./hack/chartdoc (-check
// only reports whether the README is current; its test does the same).
package main
