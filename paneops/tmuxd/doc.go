// Package tmuxd is the resident tmux client: one control-mode client per root and tmux server,
// kept open by the hidden 'wcomm __tmuxd' (ResidentServer, started on demand, ending when idle),
// that runs the tmux calls of every wcomm process of the root for a write and a read on a unix
// socket, instead of a tmux client started per call. Its calling side (Resident) is the
// paneops.Router a paneops.Client hands its calls to (Client.WithResident); whatever the resident
// cannot take, or when it is not there, the call starts a client of its own.
//
// The code is split by side: resident.go (the calling side, the wire's frames, the checks of the
// socket and of the peer) and resident_serve.go (the server: its listener, its control client,
// the files it loads buffers from, the guards of deliveries).
package tmuxd
