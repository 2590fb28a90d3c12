package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The settings apply in layers: the hosts in the user's own config still reach their host from a
// project folder whose .wcomm.yaml sets other keys (it used to hide the user's file whole, and
// 'panes --host' said the host was not declared).
func TestE2ESettingsLayersReachUserHostFromProject(t *testing.T) {
	rw := newRemoteWorld(t, 1, nil)
	h := rw.bed.Hosts[0]
	worker := rw.remoteWorker(h, false)
	project := "question_relay:\n  max_questions_per_worker: 4\nmailbox:\n  ttl: 2h\n"
	require.NoError(t, os.WriteFile(filepath.Join(rw.work, ".wcomm.yaml"), []byte(project), 0o600))

	r := rw.call("", "panes", "--host", h.Name)
	requireCode(t, 0, r)
	assert.Contains(t, r.stdout, h.Name+":"+worker+"\t")
}
