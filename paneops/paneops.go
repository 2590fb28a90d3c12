// Package paneops is everything that touches tmux or the process table: the tmux client and its
// typed errors, pane listing, finding a pane by its process tree, guarded delivery through named
// buffers, screen capture, and the cross-process lock per pane.
//
// The code is split by job: client.go (running tmux, server identity), errors.go (Error and the
// stderr classifier), panes.go (listing, resolving, capturing panes), procs.go (the process
// table), find.go (matching agents to panes), deliver.go (guarded paste and Enter), lock.go
// (the flock per pane), profiles.go and profiles.json (what each kind of program in a pane needs,
// and detecting it), verify.go (reading a program's input box off the screen and deciding what to
// do next), probe.go (doctor's live measurement) and bugs.go (known tmux defects by version).
package paneops
