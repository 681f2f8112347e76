// Command demo is `make demo`: it starts a local control plane built from
// pinned modules, runs `kreact run -f examples/` against it, provokes every
// example rule and shows what kreact did, then cleans up.
package main
