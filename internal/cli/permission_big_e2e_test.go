package cli

// A permission prompt whose tool input is larger than a question file may be: the question is
// recorded with an excerpt of it, listed, posted and answered like any other.

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeInputJSON is the hook input of a Write of content to path.
func writeInputJSON(path, content string) []byte {
	in := map[string]any{"session_id": "sess-1", "transcript_path": "/dev/null", "cwd": "/w", "permission_mode": "default",
		"hook_event_name": "PermissionRequest", "tool_name": "Write",
		"tool_input": map[string]string{"file_path": path, "content": content}}
	data, _ := json.Marshal(in)
	return data
}

func TestE2EPermissionOfALargeWriteIsListedAndAnswered(t *testing.T) {
	t.Parallel()
	p := newPermWorld(t)
	// 300 KB of text whose JSON escaping grows it (quotes, newlines, tabs).
	var b strings.Builder
	for i := 0; b.Len() < 300_000; i++ {
		b.WriteString("line \"quoted\"\tand tabbed <tag> & more of the file's text, number ")
		b.WriteString(strings.Repeat("x", i%40))
		b.WriteString("\n")
	}
	content := b.String()
	sum := sha256.Sum256([]byte(content))
	h := p.startHookInput(p.worker, writeInputJSON("/w/big-file.txt", content))
	j := p.pendingPermission(h, "/w/big-file.txt")

	st, err := os.Stat(j.file("question"))
	require.NoError(t, err)
	assert.Less(t, st.Size(), int64(64<<10), "the question keeps an excerpt, not the whole file")
	data, err := os.ReadFile(j.file("question"))
	require.NoError(t, err)
	var rec struct {
		Permission struct {
			Subject string `json:"subject"`
			Input   struct {
				Content string `json:"content"`
			} `json:"input"`
		} `json:"permission"`
	}
	require.NoError(t, json.Unmarshal(data, &rec))
	for _, s := range []string{rec.Permission.Subject, rec.Permission.Input.Content} {
		assert.Contains(t, s, content[:200], "the excerpt begins the file")
		assert.Contains(t, s, "cut by wcomm: content is 300", "the cut is said")
		assert.Contains(t, s, hex.EncodeToString(sum[:]), "with the whole's hash")
	}
	assert.True(t, strings.HasPrefix(rec.Permission.Subject, "/w/big-file.txt\n"), "the path comes first")

	// The chat post carries it too.
	m := p.tgPost("/w/big-file.txt")
	assert.Contains(t, m.Raw, "cut by wcomm")

	r := p.asPerson(nil, "answer", j.ID, "allow")
	requireCode(t, 0, r)
	d := decision(t, h.wait(t, 20*time.Second))
	assert.Equal(t, "allow", d["behavior"])
}
