// Package timerslack starts a long-lived server with a coarser timer slack, the time by which the
// kernel may defer a thread's timed wake-up to join it with another (prctl(2),
// PR_SET_TIMERSLACK; 50 us by default). The Go runtime's monitor thread (sysmon) sleeps 20 us at a
// time for as long as the program runs any code or system call, so that it can hand the processor
// of a call blocked in the kernel to the goroutines that wait: each of its wake-ups is a switch of
// threads, and they were about a tenth of an MCP server's CPU a round trip. With the slack below
// its sleeps last about that long, and it wakes a half to a third as often (measured: 32 -> 15
// sleeps a trip in the orchestrator's server, 16 -> 6 in the worker's). What else sleeps for a
// time in a server is a wait of milliseconds or more, for which half a millisecond is nothing.
//
// The slack is a thread's, and a thread starts with its creator's; the runtime makes its monitor
// before any of the program's code runs. So it is set on the thread that calls execve(2), which
// the new program's first thread keeps, and the program's every thread then has it.
package timerslack

import "time"

// Server is the slack a long-lived server runs with (the MCP server, and the resident it starts).
const Server = 500 * time.Microsecond
