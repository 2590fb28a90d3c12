// Package timerslack starts a long-lived server with a coarser timer slack, the time by which the
// kernel may defer a thread's timed wake-up to join it with another (prctl(2),
// PR_SET_TIMERSLACK; 50 us by default). The Go runtime's monitor thread (sysmon) sleeps 20 us at a
// time for as long as the program runs any code or system call, so that it can hand the processor
// of a call blocked in the kernel to the goroutines that wait: each of its wake-ups is a switch of
// threads. With the slack below, each of its sleeps lasts about that long instead. What else
// sleeps for a time in a server is a wait of tens of milliseconds or more (a poll of a busy pane,
// a lock's retry), for which two milliseconds more are nothing; what a server waits on (a socket,
// tmux, inotify, a child) wakes it at once, as before.
//
// The slack is a thread's, and a thread starts with its creator's; the runtime makes its monitor
// before any of the program's code runs. So it is set on the thread that forks the program
// (Exec, Start), which the new program's first thread keeps, and the program's every thread then
// has it.
package timerslack

import "time"

// Server is the slack a long-lived server runs with (the MCP server, and the resident, whoever
// starts it). Measured over 8 pairs of MCP servers exchanging 1 KiB (the outside harness, two
// builds taking turns), from half a millisecond to 2 ms: the orchestrator's server switched
// threads 59 -> 40 times a trip, the servers' CPU about 5.2 -> 4.8 ms a trip, 198 -> 207 round
// trips a second (medians of three runs each); 5 ms measured the same as 2. A sequential round trip
// and a handed send took no longer: their waits are on files, sockets and tmux, not on the
// monitor.
const Server = 2 * time.Millisecond
