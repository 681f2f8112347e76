package governor

import (
	"bytes"
	"strconv"
	"syscall"
)

// threadFaults returns how many pages a thread of this process has faulted
// in (its minor page faults: pages it was the first to touch since the
// kernel gave them to the process, or since Go handed them back), read
// from /proc/self/task/TID/stat, which the kernel keeps per thread. A
// thread that computes without allocating faults none; one that allocates
// new memory faults each page it writes first.
func threadFaults(tid int) (int64, bool) {
	var buf [512]byte
	fd, err := syscall.Open("/proc/self/task/"+strconv.Itoa(tid)+"/stat", syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return 0, false
	}
	n, err := syscall.Read(fd, buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return 0, false
	}
	// The thread's name, in parentheses, may hold spaces: the fields
	// counted start after the last ')'. minflt is field 10 of proc(5),
	// the 8th after the name.
	s := buf[:n]
	i := bytes.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fields := bytes.Fields(s[i+1:])
	if len(fields) < 8 {
		return 0, false
	}
	v, err := strconv.ParseInt(string(fields[7]), 10, 64)
	return v, err == nil
}

// disableHugePages makes the kernel back this process's memory with pages
// of the base size only (prctl PR_SET_THP_DISABLE), so that one fault is
// one page: where transparent huge pages are enabled for every mapping,
// one fault can map 2 MiB of Go's heap, and threadFaults would count a
// call that takes 64 MiB as 32 pages. Go uses huge pages for its heap
// only where the kernel decides so (it does not ask for them). It reports
// whether faults count pages.
func disableHugePages() bool {
	const prSetTHPDisable = 41
	_, _, errno := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetTHPDisable, 1, 0, 0, 0, 0)
	return errno == 0
}

// ownFaults is threadFaults for the calling thread, cheaper: one system
// call (getrusage RUSAGE_THREAD reads the same counter).
func ownFaults() (int64, bool) {
	const rusageThread = 1
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return ru.Minflt, true
}
