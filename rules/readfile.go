package rules

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

// MaxFileSize bounds every file the loaders read: rule files, CRD
// manifests and test files, in bytes.
const MaxFileSize = 16 << 20

// ReadFile reads the regular file at path, of at most MaxFileSize bytes.
// Anything else (a FIFO, a device, a socket, a directory) is refused
// without being read: it is opened with O_NONBLOCK, so that even a FIFO
// swapped in after a check does not block the open, and its type is
// checked on the open file. Errors are *fs.PathError.
func ReadFile(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("not a regular file (%s); only regular files are read", fileKind(info.Mode()))}
	}
	if info.Size() > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("file is %d bytes, over the limit of %d", info.Size(), MaxFileSize)}
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &fs.PathError{Op: "read", Path: path, Err: err}
	}
	if len(data) > MaxFileSize {
		return nil, &fs.PathError{Op: "read", Path: path, Err: fmt.Errorf("file is over the limit of %d bytes", MaxFileSize)}
	}
	return data, nil
}

func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "of mode " + m.Type().String()
}
