//go:build !linux

package residency

import "errors"

// TrimExecutable does nothing here: it needs Linux's /proc and madvise.
func TrimExecutable() (int64, error) {
	return 0, errors.New("trim executable: only on Linux")
}
