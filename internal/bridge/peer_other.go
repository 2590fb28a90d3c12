//go:build !linux

package bridge

import "net"

// peerIsUs relies on the meeting folder's mode 0700 where SO_PEERCRED is not had.
func peerIsUs(*net.UnixConn) error { return nil }
