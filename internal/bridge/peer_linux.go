package bridge

import (
	"fmt"
	"net"
	"os"
	"syscall"
)

// peerIsUs checks that the process at the other end of c runs as this user (SO_PEERCRED): the
// meeting folder is 0700 already, so this guards against a folder made loose by hand.
func peerIsUs(c *net.UnixConn) error {
	raw, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var cred *syscall.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) {
		cred, cerr = syscall.GetsockoptUcred(int(fd), syscall.SOL_SOCKET, syscall.SO_PEERCRED)
	}); err != nil {
		return err
	}
	if cerr != nil {
		return fmt.Errorf("read the peer's credentials: %w", cerr)
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("the peer runs as uid %d, not as you (uid %d)", cred.Uid, os.Getuid())
	}
	return nil
}
