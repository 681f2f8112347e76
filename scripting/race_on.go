//go:build race

package scripting

// pagesPerPage is how many pages a thread faults in per page of memory it
// takes: under the race detector, each page of the heap that a thread
// writes first comes with four pages of the detector's shadow memory,
// which is not the script's (measured: writing 64 MiB faults 320 MiB).
const pagesPerPage = 5
