//go:build !race

package scripting

// pagesPerPage is how many pages a thread faults in per page of memory it
// takes (see race_on.go).
const pagesPerPage = 1
