// Package paneops is everything that touches tmux or the process table: the tmux client and its
// typed errors, pane listing, finding a pane by its process tree, the agent profiles and their
// detection, guarded delivery through named buffers, screen capture and reading an input box off
// it, and the terminal's mode. Below it, in rooms of their own: lock (every flock of wcomm, the
// cross-process lock per pane among them) and lease (whether a process holds a file open for
// writing).
//
// The code is split by job: client.go (running tmux, server identity), errors.go (Error, the stderr
// classifier, NotNowError), panes.go (listing, resolving, capturing panes), procs.go,
// procs_pane.go, procstart.go and job_*.go (the process table, one pane's tree, process start
// times, foreground jobs), tty_*.go (a terminal's canonical mode), find.go (matching agents to
// panes), delivery.go (what a delivery is and its result), deliver.go (the steps of a paste and its
// Enter), deliver_guard.go (their guarded tmux calls and marks), profiles.go and profiles.json
// (what each kind of program in a pane needs), profile_detect.go (which profile a pane runs),
// screen.go (capturing and parsing a screen), verify.go (reading a program's input box off it),
// decide.go (the delivery's decisions from each look), probe.go (doctor's live measurement) and
// bugs.go (known tmux defects by version).
package paneops
