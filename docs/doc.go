// Package docs holds kreact's user documentation (Markdown, not Go) and
// the tests that keep it true. Every relative link in the repository's
// Markdown files (README.md, CONTRIBUTING.md, docs/ and the READMEs
// beside the code) must name a file or folder that exists, and a link to
// a heading (file.md#anchor, or #anchor within a file) must name a
// heading of that file, spelt as GitHub makes anchors. The user docs are
// checked against the code they describe: cli.md names every flag of
// every command where a reader of that command looks (cmd/kreact/cmdline);
// rules.md every field of the rule format (its JSON Schema, which package
// rules holds to its decoder), and no doc names a spec field that does not
// exist; script-api.md every handler and every function of the kreact and
// console objects (packages event and scripting); operations.md's metrics
// table every metric kreact registers, with its labels (package metrics),
// and no doc names a kreact_ metric that is not registered; every log line
// the docs quote (troubleshooting.md's table, and "the log line `…`" in
// any) is written by the code; every test the docs name exists; every
// whole rule the docs show validates without a warning, and testing.md's
// RuleTest passes beside the examples' tests. The checks need no network and no cluster, so `make unit`
// runs them; links to other sites are not checked.
package docs
