package paneops

import (
	"os"
	"testing"

	"github.com/wcomm/wcomm/internal/testhome"
)

// TestMain runs the tests with a scratch HOME and XDG folders: never the user's settings. Run
// with WCOMM_TEST_HOLD_CONTROL set, the test binary is instead a process that starts a control
// client on that socket and waits to be killed (TestRealControlKilledWithItsProcess).
func TestMain(m *testing.M) {
	if sock := os.Getenv("WCOMM_TEST_HOLD_CONTROL"); sock != "" {
		holdControl(sock)
	}
	testhome.Main(m)
}

// holdControl starts a control client on the tmux server at sock, says so on stdout and waits.
func holdControl(sock string) {
	k := (&Client{Server: Server{Socket: sock}}).Control("main")
	k.Start()
	os.Stdout.WriteString("started\n")
	select {}
}
