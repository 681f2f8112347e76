// Package docs holds kreact's user documentation (Markdown, not Go) and
// the test that keeps its links true: every relative link in the
// repository's Markdown files (README.md, CONTRIBUTING.md, docs/ and the
// READMEs beside the code) must name a file or folder that exists, and a
// link to a heading (file.md#anchor, or #anchor within a file) must name
// a heading of that file, spelt as GitHub makes anchors. The check needs
// no network and no cluster, so `make unit` runs it; links to other sites
// are not checked.
package docs
