package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat; it
// is 100 on every Linux this runs on.
const clockTicks = 100

// cpuSeconds returns the user plus system CPU time of a process.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(data))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line. The command name, field 2, may hold spaces and
// parentheses, so the fields are counted after its last ')'. (The same
// as hack/bench's: each command is a main package of its own.)
func parseStatCPU(stat string) (float64, error) {
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
