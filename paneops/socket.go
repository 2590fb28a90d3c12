package paneops

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// SocketExposure says how others could reach the tmux socket, or "" when they cannot. Other users
// may attach to a socket they can write, but only through its folder: tmux makes its sockets
// group-writable (0660) inside a 0700 folder of its own (/tmp/tmux-UID), and that is private.
func SocketExposure(socket string, st os.FileInfo) string {
	if st.Mode().Perm()&0o066 == 0 {
		return ""
	}
	dir := filepath.Dir(socket)
	if ds, err := os.Stat(dir); err == nil && ds.Mode().Perm()&0o011 == 0 {
		if sys, ok := ds.Sys().(*syscall.Stat_t); ok && int(sys.Uid) == os.Getuid() {
			return ""
		}
	}
	return fmt.Sprintf("socket %s is accessible to others (%s, in folder %s that others can enter): chmod 700 the folder or the socket",
		socket, st.Mode().Perm(), dir)
}
