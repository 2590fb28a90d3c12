package web

import (
	"testing"

	"github.com/wcomm/wcomm/internal/testhome"
)

// TestMain runs the tests with a scratch HOME and XDG folders: never the user's settings.
func TestMain(m *testing.M) { testhome.Main(m) }
