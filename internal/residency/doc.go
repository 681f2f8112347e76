// Package residency gives back the pages of kreact's own executable that
// it touched while starting.
//
// Most of an idle kreact's resident memory is not its heap but its
// binary: the code and read-only data that starting touched (the init
// functions of some 800 packages, discovery, compiling rules), plus the
// neighbours the kernel maps around each page it faults in (fault-around,
// 64 KiB by default). At idle with one rule that was 37 of 45 MB, against
// 20 of 24 MB for a bare client-go controller, whose binary is half the
// size. Those pages are clean copies of the file: TrimExecutable drops
// them from the process (they stay in the page cache, reclaimable) and
// asks the kernel to fault in only what is used from then on, so that
// the resident binary is the steady working set.
//
// # Guarantees
//
//   - Only read-only mappings of the executable file are touched (code
//     and read-only data); writable ones, and the heap, never are, so no
//     data can be lost: a dropped page is read back from the file on its
//     next use, a minor fault.
//   - It never fails the caller: where the system does not allow it (not
//     Linux, no /proc), it does nothing and says why.
package residency
