//go:build linux

package residency

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// TrimExecutable drops the resident pages of the executable's read-only
// mappings and turns off fault-around for them. It returns how many bytes
// the mappings span.
func TrimExecutable() (int64, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, fmt.Errorf("trim executable: %w", err)
	}
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		return 0, fmt.Errorf("trim executable: %w", err)
	}
	defer f.Close()
	var total int64
	s := bufio.NewScanner(f)
	for s.Scan() {
		// 00400000-00452000 r-xp 00000000 08:02 173521 /usr/bin/x
		fields := strings.Fields(s.Text())
		if len(fields) < 6 || fields[5] != exe || strings.Contains(fields[1], "w") {
			continue
		}
		from, to, ok := strings.Cut(fields[0], "-")
		if !ok {
			continue
		}
		start, err1 := strconv.ParseUint(from, 16, 64)
		end, err2 := strconv.ParseUint(to, 16, 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		n := uintptr(end - start)
		addr := uintptr(start)
		// MADV_RANDOM first: no fault-around or read-ahead on the
		// faults that follow, so only pages in use come back.
		if err := madvise(addr, n, syscall.MADV_RANDOM); err != nil {
			return total, fmt.Errorf("trim executable: madvise random: %w", err)
		}
		if err := madvise(addr, n, syscall.MADV_DONTNEED); err != nil {
			return total, fmt.Errorf("trim executable: madvise dontneed: %w", err)
		}
		total += int64(n)
	}
	return total, s.Err()
}

func madvise(addr, n uintptr, advice int) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, addr, n, uintptr(advice)); errno != 0 {
		return errno
	}
	return nil
}
