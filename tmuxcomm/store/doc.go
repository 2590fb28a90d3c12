// Package store is the room under every other room of the engine: the root and its checks (a root
// that is a symlink or another user's is refused), whole files written atomically or claimed
// exclusively, bounded reads, the one map of the root's hidden stores (stores.go), the tree watcher
// (inotify) that the watch feed, the waits and the bridge share, and the sentinel errors every room
// returns. Its locks are paneops/lock's, the one lock helper of the program. It knows nothing of
// exchanges, questions or tmux: it imports only messages (names and checks), no room.
package store
