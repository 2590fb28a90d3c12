package messages

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// seedDelta is the protocol's DELTA template verbatim: a template, whose "yes|no" is not an answer.
const seedDelta = `DELTA:
  changes: [...]
  risks: [...]
  alternatives: [...]
  needs_consult: yes|no
`

func deltaList(items ...string) []string { return append([]string{}, items...) }

func TestParseDelta(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		want      Delta
		wantFound bool
		wantErr   string
	}{
		{name: "seed template", in: seedDelta, wantFound: true, wantErr: `line 5: needs_consult is "yes|no"; want yes or no`},
		{name: "seed shape filled in", in: "DELTA:\n  changes: [auth.go, auth_test.go]\n  risks: [token reuse]\n  alternatives: []\n  needs_consult: no\n",
			want: Delta{Changes: deltaList("auth.go", "auth_test.go"), Risks: deltaList("token reuse"), Alternatives: deltaList()}, wantFound: true},
		{name: "in a response with text around", in: "Done.\n\nDELTA:\n  changes: [a]\n  risks: []\n  alternatives: []\n  needs_consult: yes\n\nThanks.\n",
			want: Delta{Changes: deltaList("a"), Risks: deltaList(), Alternatives: deltaList(), NeedsConsult: true}, wantFound: true},
		{name: "in a code fence", in: "```text\nDELTA:\n  changes: [a]\n  needs_consult: no\n```\n",
			want: Delta{Changes: deltaList("a"), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "indented DELTA", in: "- report:\n    DELTA:\n      changes: [a]\n      needs_consult: no\n  - next\n",
			want: Delta{Changes: deltaList("a"), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "quoted items with commas", in: "DELTA:\n  changes: [\"a, b\", c, \"say \\\"hi\\\"\", \"\"]\n  needs_consult: no\n",
			want: Delta{Changes: deltaList("a, b", "c", `say "hi"`, ""), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "items trimmed, empty ones dropped", in: "DELTA:\n  changes: [  a  ,b,, ]\n  risks: [ ]\n  needs_consult: no\n",
			want: Delta{Changes: deltaList("a", "b"), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "YAML items", in: "DELTA:\n  changes:\n    - edit auth.go, then tests\n    - \"quoted\"\n  risks:\n  alternatives: []\n  needs_consult: YES\n",
			want: Delta{Changes: deltaList("edit auth.go, then tests", "quoted"), Risks: deltaList(), Alternatives: deltaList(), NeedsConsult: true}, wantFound: true},
		{name: "YAML items at key indent", in: "DELTA:\n  changes:\n  - a\n  - b\n  needs_consult: true\n",
			want: Delta{Changes: deltaList("a", "b"), Risks: deltaList(), Alternatives: deltaList(), NeedsConsult: true}, wantFound: true},
		{name: "unknown key and its items skipped", in: "DELTA:\n  files:\n    - x\n  notes: whatever\n  needs_consult: no\n",
			want: Delta{Changes: deltaList(), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "tabs and CRLF", in: "DELTA:\r\n\tchanges: [a]\r\n\tneeds_consult: false\r\n",
			want: Delta{Changes: deltaList("a"), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "first DELTA wins", in: "DELTA:\n  needs_consult: no\nDELTA:\n  needs_consult: yes\n",
			want: Delta{Changes: deltaList(), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "brackets inside items", in: "DELTA:\n  changes: [f(a[0]), x]]\n  needs_consult: no\n",
			want: Delta{Changes: deltaList("f(a[0])", "x]"), Risks: deltaList(), Alternatives: deltaList()}, wantFound: true},
		{name: "no DELTA", in: "All done.\nNo changes.\n"},
		{name: "DELTA inside a sentence", in: "The DELTA: none\n"},
		{name: "empty body", in: ""},
		{name: "not indented", in: "DELTA:\nchanges: [a]\nneeds_consult: no\n", wantFound: true, wantErr: "line 1: DELTA has no indented"},
		{name: "blank line ends the block", in: "DELTA:\n  changes: [a]\n\n  needs_consult: no\n", wantFound: true, wantErr: "line 1: DELTA has no"},
		{name: "missing needs_consult", in: "x\nDELTA:\n  changes: []\n", wantFound: true, wantErr: "line 2: DELTA has no"},
		{name: "duplicate key", in: "DELTA:\n  changes: [a]\n  changes: [b]\n  needs_consult: no\n", wantFound: true, wantErr: "line 3: changes appears twice"},
		{name: "scalar list", in: "DELTA:\n  changes: none\n  needs_consult: no\n", wantFound: true, wantErr: `line 2: changes: "none" is not a list`},
		{name: "unterminated quote", in: "DELTA:\n  changes: [\"a, b]\n  needs_consult: no\n", wantFound: true, wantErr: "line 2: changes: quoted item"},
		{name: "text after quoted item", in: "DELTA:\n  changes: [\"a\" b]\n  needs_consult: no\n", wantFound: true, wantErr: "after a quoted item"},
		{name: "item before key", in: "DELTA:\n  - a\n  needs_consult: no\n", wantFound: true, wantErr: "line 2: - item before any key"},
		{name: "item after inline list", in: "DELTA:\n  changes: [a]\n    - b\n  needs_consult: no\n", wantFound: true, wantErr: "line 3: - item under changes"},
		{name: "item under needs_consult", in: "DELTA:\n  needs_consult:\n    - yes\n", wantFound: true, wantErr: "line 2: needs_consult is \"\""},
		{name: "not key value", in: "DELTA:\n  just words\n  needs_consult: no\n", wantFound: true, wantErr: "line 2: \"just words\" is not"},
		{name: "empty key", in: "DELTA:\n  : x\n  needs_consult: no\n", wantFound: true, wantErr: "line 2:"},
		{name: "bad yaml quoted item", in: "DELTA:\n  changes:\n    - \"a\" b\n  needs_consult: no\n", wantFound: true, wantErr: "line 3: text"},
		{name: "NUL in value", in: "DELTA:\n  needs_consult: no\x00\n", wantFound: true, wantErr: "line 2:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := ParseDelta(tt.in)
			assert.Equal(t, tt.wantFound, found)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrSyntax)
				assert.Contains(t, err.Error(), tt.wantErr)
				return
			}
			require.NoError(t, err)
			if !tt.wantFound {
				assert.Equal(t, Delta{}, got)
				return
			}
			assert.Equal(t, tt.want, got)
			again, found, err := ParseDelta(got.format())
			require.NoError(t, err)
			assert.True(t, found)
			assert.Equal(t, got, again, "round trip")
		})
	}
}

func TestDeltaFormat(t *testing.T) {
	d := Delta{Changes: deltaList("a", "b, c", " padded", `"quoted"`, "", `back\slash`), Risks: deltaList(), Alternatives: deltaList("x"), NeedsConsult: true}
	assert.Equal(t, "DELTA:\n  changes: [a, \"b, c\", \" padded\", \"\\\"quoted\\\"\", \"\", back\\slash]\n  risks: []\n  alternatives: [x]\n  needs_consult: yes\n", d.format())
	got, found, err := ParseDelta(d.format())
	require.NoError(t, err)
	require.True(t, found)
	assert.Equal(t, d, got)
}

func TestDeltaJSON(t *testing.T) {
	d, _, err := ParseDelta("DELTA:\n  needs_consult: no\n")
	require.NoError(t, err)
	b, err := json.Marshal(d)
	require.NoError(t, err)
	assert.JSONEq(t, `{"changes":[],"risks":[],"alternatives":[],"needs_consult":false}`, string(b), "empty lists are [] not null")
}
