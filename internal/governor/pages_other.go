//go:build !linux

package governor

// Without per-thread page fault counts, a call is charged with what the
// process allocated while it ran (see allocWatch).

func threadFaults(int) (int64, bool) { return 0, false }

func ownFaults() (int64, bool) { return 0, false }

func disableHugePages() bool { return false }
