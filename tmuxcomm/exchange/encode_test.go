package exchange

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

// fullExchange is an exchange with every exported field set, strings holding what encoding/json
// escapes.
func fullExchange(s string) *Exchange {
	at := time.Date(2026, 1, 17, 12, 0, 0, 123456789, time.FixedZone("x", 3600))
	answered := at.Add(time.Second).UTC()
	return &Exchange{
		Session: "20260117-120000-o1-w2" + s, Dir: "/r/" + s, Seq: 17, ID: "id" + s, StartedAt: "20260117-120000",
		Orchestrator: messages.PaneID("%1" + s), Worker: "%2", Host: "h" + s, Broadcast: "b" + s, Capability: "read-only",
		Status: StatusAnswered, State: StateRead, Form: "paste", Profile: "claude", Via: ViaTyped, Verified: true,
		Evidence: "seen " + s, Summary: "sum " + s, RequestPath: "/r/001-request.md", ResponsePath: "/r/002-response.md",
		SentAt: at, AnsweredAt: &answered, RequestBody: "req\n" + s, ResponseBody: "resp\t" + s,
		Delta:     &messages.Delta{Changes: []string{"a" + s, "b"}, Risks: []string{}, Alternatives: nil, NeedsConsult: true},
		Integrity: "ok", Read: true,
		Events: []Event{
			{State: StateWritten, At: at},
			{State: StatePasted, At: at.Add(time.Millisecond), Detail: map[string]string{"pane": "%2", "form": s, "a": "1", "z": ""}},
			{State: StateAnswered, At: time.Date(2026, 1, 17, 0, 0, 0, 0, time.UTC), Detail: map[string]string{}},
		},
		Problems: []string{"p1 " + s, ""}, BodyBytes: 42, BodySum: "sum" + s,
	}
}

// An exchange's JSON (history --json, show --json, the index, the web page) leaves out the request
// body's size and hash as the file holds them: no reader needs them, and integrity says whether
// they match what was sent.
func TestExchangeJSONLeavesOutBodySum(t *testing.T) {
	x := fullExchange("x7")
	data, err := json.Marshal(x)
	require.NoError(t, err)
	got, ok := x.appendIndented(nil, indexElem)
	require.True(t, ok)
	for _, enc := range []string{string(data), string(got)} {
		assert.NotContains(t, enc, "BodyBytes")
		assert.NotContains(t, enc, "BodySum")
		assert.NotContains(t, enc, x.BodySum)
		assert.Contains(t, enc, `"integrity"`)
	}
}

// appendIndented writes json.MarshalIndent's bytes for every field, and for strings that need
// escaping (HTML characters, control characters, invalid UTF-8, line separators).
func TestAppendIndentedIsMarshalIndent(t *testing.T) {
	// Every exported field is set in the fixture, so a field added to Exchange without the
	// encoder knowing it fails here.
	v := reflect.ValueOf(*fullExchange(""))
	for i := range v.NumField() {
		if f := v.Type().Field(i); f.IsExported() {
			assert.False(t, v.Field(i).IsZero(), "fullExchange leaves %s unset", f.Name)
		}
	}
	for _, s := range []string{"", "plain", `q"uote\back`, "<b>&amp;</b>", "ctl\x00\x01\b\f\n\r\t\x1f\x7f", "é ü 日本", "bad\xff\xfeutf8", "sep\u2028\u2029", "\U0001F600"} {
		for _, prefix := range []string{indexElem, "", "  "} {
			x := fullExchange(s)
			want, err := json.MarshalIndent(x, prefix, "  ")
			require.NoError(t, err)
			got, ok := x.appendIndented(nil, prefix)
			require.True(t, ok)
			assert.Equal(t, string(want), string(got), "string %q, prefix %q", s, prefix)
		}
	}
	// The omitted fields, zero times and nil lists.
	for _, x := range []*Exchange{{}, {Delta: &messages.Delta{}}, {Events: []Event{{}}}, {Problems: []string{}}} {
		want, err := json.MarshalIndent(x, indexElem, "  ")
		require.NoError(t, err)
		got, err := x.indented()
		require.NoError(t, err)
		assert.Equal(t, string(want), string(got))
	}
	// A time encoding/json refuses is refused, as by json.MarshalIndent.
	x := fullExchange("")
	x.SentAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	_, ok := x.appendIndented(nil, indexElem)
	assert.False(t, ok)
	_, err := x.indented()
	assert.Error(t, err)
}
