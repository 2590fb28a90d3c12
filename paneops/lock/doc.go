// Package lock is wcomm's one way to lock a file: flock(2) waited for in the kernel with a
// callback that may end the wait (Flock), a lock file opened and locked in one step with a
// deadline (Open, Try, File), the question whether another process holds one (IsLocked), and the
// per-pane send lock whose holder writes itself into the file so that a stalled holder is told
// apart from a long queue (Pane). Every lock here is an flock: it dies with its process, so a
// killed holder never leaves one stale. No other package calls flock.
//
// It sits below everything that locks (paneops' delivery, the engine's store and rooms, the
// bridge, the remote client) and imports only the standard library and messages.
package lock
