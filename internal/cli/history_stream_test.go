package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
)

// A history far larger than the output buffer is printed in pieces of whole sessions: no
// character is split between two writes of the sanitisers, so none is mangled.
func TestHistoryStreamsWithoutSplittingCharacters(t *testing.T) {
	root := filepath.Join(t.TempDir(), "root")
	require.NoError(t, os.Mkdir(root, 0o700))
	const sessions, per = 30, 20
	summary := "größer — 見る ✓ " + strings.Repeat("é", 40)
	at := time.Date(2026, 1, 17, 12, 0, 0, 0, time.UTC)
	for i := 0; i < sessions; i++ {
		s := messages.Session{StartedAt: at.Add(time.Duration(i) * time.Minute).Format(messages.StampLayout),
			Orchestrator: messages.PaneID(fmt.Sprintf("%%%d", i)), Worker: messages.PaneID(fmt.Sprintf("%%%d", i+100))}
		dir := filepath.Join(root, s.Name())
		require.NoError(t, os.Mkdir(dir, 0o700))
		for k := 0; k < per; k++ {
			n := 2*k + 1
			body := summary + "\n"
			size, sum := messages.BodySum([]byte(body))
			resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
			req := messages.Request{Header: messages.RequestHeader{Capability: messages.ReadOnly, ID: fmt.Sprintf("%s-%04x", s.StartedAt, k),
				StartedAt: s.StartedAt, Orchestrator: s.Orchestrator, Worker: s.Worker, Bytes: size, Sum: sum}, Body: body,
				Instructions: messages.Instructions{ResponsePath: resp, Fallback: messages.FallbackCommand(s, resp)}}
			require.NoError(t, os.WriteFile(filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest)), []byte(messages.FormatRequest(req)), 0o600))
		}
	}
	var out, errb bytes.Buffer
	require.Equal(t, 0, Run(Companions{}, []string{"history", "--root", root, "--json"}, strings.NewReader(""), &out, &errb), errb.String())
	require.Greater(t, out.Len(), 128<<10, "more than the buffer holds")
	var got struct {
		Sessions []exchange.SessionSummary `json:"sessions"`
	}
	require.NoError(t, json.Unmarshal(out.Bytes(), &got))
	require.Len(t, got.Sessions, sessions)
	for _, s := range got.Sessions {
		require.Len(t, s.Exchanges, per)
		for _, x := range s.Exchanges {
			assert.Equal(t, summary, x.Summary)
		}
	}
	out.Reset()
	require.Equal(t, 0, Run(Companions{}, []string{"history", "--root", root}, strings.NewReader(""), &out, &errb), errb.String())
	assert.Equal(t, sessions*per, strings.Count(out.String(), summary))
	assert.NotContains(t, out.String(), "\uFFFD")
}
