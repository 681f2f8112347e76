//go:build !linux && unix

package idleprio

import "syscall"

func lower(pid int) { _ = syscall.Setpriority(syscall.PRIO_PROCESS, pid, 19) }
