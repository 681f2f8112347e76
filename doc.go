// Package kreact holds no code: kreact's packages are the folders below
// it (CONTRIBUTING.md, "How the code is laid out", maps them). Its test,
// levels_test.go, keeps their levels: it lists the packages from the
// bottom up, and fails when a package imports one of a level above its
// own, or when a package is in no level.
package kreact
