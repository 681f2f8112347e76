package governor

import (
	"fmt"
	"math"
	"strconv"
	"time"
)

// MemoryError is the value the watchdog interrupts a call with when the
// call took more memory than its limit (see allocWatch for what it is
// charged with).
type MemoryError struct {
	// Limit is the call's limit and Used what it was charged with, in
	// bytes.
	Limit, Used int64
	// Process is set when Used is what the whole process allocated
	// while the call ran; Own is then the new memory the call took
	// itself, or -1 where the operating system does not tell.
	Process bool
	Own     int64
}

// Error implements error; the message is what the call's failure says.
func (e *MemoryError) Error() string {
	switch {
	case e.Process && e.Own < 0:
		return fmt.Sprintf("memory limit exceeded: the process allocated %s while the call ran, over the call's limit of %s (no per-call figure on this system)",
			FormatBytes(e.Used), FormatBytes(e.Limit))
	case e.Process:
		return fmt.Sprintf("memory limit exceeded: the process allocated %s while the call ran, over the call's limit of %s, and the call took %s of new memory itself",
			FormatBytes(e.Used), FormatBytes(e.Limit), FormatBytes(e.Own))
	}
	return fmt.Sprintf("memory limit exceeded: the call took %s of new memory, over its limit of %s",
		FormatBytes(e.Used), FormatBytes(e.Limit))
}

// CPUError is the value the watchdog interrupts a call with when it used
// more CPU time than its Meter's cpuLimit.
type CPUError struct {
	// Limit is the CPU time the call was allowed.
	Limit time.Duration
}

// Error implements error.
func (e *CPUError) Error() string {
	return fmt.Sprintf("CPU limit exceeded: the call computed for more than %v", e.Limit)
}

// FormatBytes writes n bytes for people: "64 MiB", "1.5 GiB", "512 bytes".
func FormatBytes(n int64) string {
	units := []string{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	if n < 1<<10 {
		return strconv.FormatInt(n, 10) + " bytes"
	}
	f := float64(n)
	unit := ""
	for _, u := range units {
		if f < 1<<10 {
			break
		}
		f /= 1 << 10
		unit = u
	}
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) + " " + unit
}
