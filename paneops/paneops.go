// Package paneops is everything that touches tmux or the process table: the tmux client and its
// typed errors, pane listing, finding a pane by its process tree, which agent profile a pane
// runs, guarded delivery through named buffers, screen capture, and the terminal's mode. Below
// it, in rooms of their own: profile (what each kind of program in a pane needs, and what its
// screen says: the input box, a dialog, the delivery's decision from each look), tmuxd (the
// resident tmux client: one control-mode client per root and server that runs the calls of every
// wcomm process, behind Client.WithResident), proc (the process table), lock (every flock of
// wcomm, the cross-process lock per pane among them), lease (whether a process holds a file open
// for writing) and door (an agent's own way in).
//
// The code is split by job: client.go (running tmux, server identity), errors.go (Error, the stderr
// classifier, NotNowError), panes.go (listing, resolving, capturing panes), job_*.go (foreground
// jobs), tty_*.go (a terminal's canonical mode), find.go (matching agents to panes),
// profile_detect.go (which profile a pane runs), delivery.go (what a delivery is and its result),
// deliver.go (the steps of a paste and its Enter), deliver_guard.go (their guarded tmux calls and
// marks), deliver_fence.go (fencing the calls of a route that broke), screen.go and screens.go
// (capturing screens), control.go and route.go (a control-mode client, and where a call goes),
// probe.go (doctor's live measurement) and bugs.go (known tmux defects by version).
package paneops
