// Package idleprio lowers a thread to the lowest CPU priority the
// operating system lets an unprivileged process choose, and starts child
// processes there.
//
// Guarantees:
//   - Demote moves one thread of this process to SCHED_IDLE (Linux), or,
//     where that is refused (a seccomp profile), to nice 19. It never
//     fails loudly: a thread that cannot be lowered keeps running as it
//     was. Where the operating system offers no per-thread priority it
//     does nothing.
//   - Start starts a command whose every thread runs at that priority
//     from its first instruction, because it forks from a thread that
//     was demoted first. On Linux the child is killed when that thread,
//     kept for the child's whole life, ends: if this process dies, so
//     does the child (Pdeathsig).
//
// A thread cannot get its priority back without privileges (sched(7)),
// so every demoted thread here ends with the goroutine locked to it.
package idleprio
