package benchstat

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat; it
// is 100 on every Linux this runs on.
const clockTicks = 100

// CPUSeconds returns the user plus system CPU time of a process.
func CPUSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return ParseStatCPU(string(data))
}

// ParseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line. The command name, field 2, may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func ParseStatCPU(stat string) (float64, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat: no command name")
	}
	fields := strings.Fields(stat[i+1:])
	// fields[0] is field 3 (state): utime is field 14, fields[11].
	if len(fields) < 13 {
		return 0, fmt.Errorf("stat: %d fields", len(fields))
	}
	utime, err := strconv.ParseUint(fields[11], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat utime: %w", err)
	}
	stime, err := strconv.ParseUint(fields[12], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("stat stime: %w", err)
	}
	return float64(utime+stime) / clockTicks, nil
}

// PeakRSS returns a process's peak resident set size in bytes (VmHWM).
func PeakRSS(pid int) (int64, error) {
	hwm, _, err := Memory(pid)
	return hwm, err
}

// Memory returns a process's peak and current resident set sizes in bytes
// (VmHWM and VmRSS).
func Memory(pid int) (hwm, rss int64, err error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	if hwm, err = ParseStatusBytes(string(data), "VmHWM"); err != nil {
		return 0, 0, err
	}
	if rss, err = ParseStatusBytes(string(data), "VmRSS"); err != nil {
		return 0, 0, err
	}
	return hwm, rss, nil
}

// ParseStatusBytes reads a size field ("VmHWM:\t 51200 kB") of a
// /proc/PID/status file.
func ParseStatusBytes(status, field string) (int64, error) {
	for line := range strings.SplitSeq(status, "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(rest)
			if len(f) != 2 || f[1] != "kB" {
				return 0, fmt.Errorf("%s: %q", field, rest)
			}
			kb, err := strconv.ParseInt(f[0], 10, 64)
			if err != nil {
				return 0, fmt.Errorf("%s: %w", field, err)
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("no %s in status", field)
}
