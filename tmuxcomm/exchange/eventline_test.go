package exchange

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// eventLines are log lines as LogEvent writes them, and lines it does not write, that the fast
// decoder must either decode as encoding/json does or leave to it.
var eventLines = []string{
	`{"state":"written","at":"2026-01-17T12:00:00Z"}`,
	`{"state":"pasted","at":"2026-01-17T12:00:00.001Z","detail":{"pane":"%1000"}}`,
	`{"state":"submitted","at":"2026-01-17T12:00:00.002+02:00","detail":{"evidence":"the prompt took it","verified":"true"}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":{}}`,
	`{"state":"","at":"2026-01-17T12:00:00Z","detail":{"":""}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":{"a":"1","a":"2"}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":{"a":"\u003c"}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":{"a":"é"}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":null}`,
	`{"State":"x","at":"2026-01-17T12:00:00Z"}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","extra":1}`,
	`{"at":"2026-01-17T12:00:00Z","state":"x"}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z"} `,
	`{"state":"x","at":"2026-01-17T12:00:00Z"}}`,
	`{"state":"x","at":"not a time"}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":{"a":1}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z","detail":{"a":"1",}}`,
	`{"state":"x","at":"2026-01-17T12:00:00Z"`,
	`{"state":"x`,
}

// The fast decoder decodes what LogEvent writes, and whatever it decodes, it decodes as
// encoding/json does.
func TestParseEventLineIsJSONUnmarshal(t *testing.T) {
	for _, line := range eventLines {
		checkEventLine(t, []byte(line))
	}
	dir := t.TempDir()
	at := time.Date(2026, 1, 17, 12, 0, 0, 1500, time.FixedZone("x", 3600))
	require.NoError(t, LogEvent(dir, 1, StateWritten, nil, at))
	require.NoError(t, LogEvent(dir, 1, StateSubmitted, map[string]string{"evidence": "the prompt took it", "pane": "%3"}, at))
	data, err := os.ReadFile(filepath.Join(dir, LogName(1)))
	require.NoError(t, err)
	for _, line := range splitLines(data) {
		_, ok := parseEventLine(line)
		assert.True(t, ok, "LogEvent's own line %s is decoded fast", line)
		checkEventLine(t, line)
	}
}

func FuzzParseEventLine(f *testing.F) {
	for _, line := range eventLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkEventLine(t, line) })
}

func checkEventLine(t *testing.T, line []byte) {
	t.Helper()
	got, ok := parseEventLine(line)
	if !ok {
		return
	}
	var want Event
	require.NoError(t, json.Unmarshal(line, &want), "decoded fast, but not JSON: %s", line)
	a, _ := json.Marshal(got)
	b, _ := json.Marshal(want)
	assert.Equal(t, string(b), string(a), "%s", line)
	assert.True(t, want.At.Equal(got.At) && want.At.Location().String() == got.At.Location().String(), "%s", line)
	assert.Equal(t, want.Detail == nil, got.Detail == nil, "%s", line)
}

func splitLines(data []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(data, []byte{'\n'}) {
		if len(l) > 0 {
			out = append(out, l)
		}
	}
	return out
}
