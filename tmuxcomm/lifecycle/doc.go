// Package lifecycle is the room of an agent's life in a pane: it owns spawning a program or an
// agent's profile in a new tmux pane and waiting until it is ready for input, its name (a pane
// option unique on its tmux server), its git worktree, stopping it (its own quit first, then the
// pane) and restarting it in the same pane with its conversation where the agent can take it up
// again. What wcomm knows of each pane it started is one record under the root (.lifecycle/),
// written before the pane is reported. The first prompt goes through the send the door gives it
// (Sender), so it is an exchange like any other. It imports core's neighbours below it only:
// store, paneops (and its profile, door and lock rooms) and messages; what it needs of the
// fleet room and the door it names as the small interfaces Agents and Sender.
package lifecycle
