// Package profile is what wcomm knows about each kind of program in a pane, as data
// (profiles.json, embedded, overridden from the settings): how to recognise it, how long to wait
// between a paste and its Enter, where its input box is and what the box looks like empty, busy or
// holding a paste, and what its permission dialog looks like. Given a parsed screen it reads the
// box (Inspect, Attribute), finds a dialog (Dialog), and decides a delivery's next step from each
// look (DecideBefore, DecideShown, DecideAfter). It touches neither tmux nor the process table:
// paneops captures the screens and chooses the profile of a pane (Detect).
//
// The code is split by job: profiles.go and profiles.json (the profiles and their loading),
// screen.go (a captured screen's rows, with faint runes marked), verify.go (reading the input box),
// dialog.go (a program's own permission dialog), decide.go (the delivery's decisions),
// detection.go (the profile chosen for a pane, and why) and agent.go (one record per agent: what
// the kit installs for it, its hooks' events and its permission decision format, beside its
// profile).
package profile
