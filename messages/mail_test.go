package messages

import (
	"bytes"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestMailIDs(t *testing.T) {
	at := time.Unix(1795573754, 248449989)
	id, err := NewMailID(at, bytes.NewReader([]byte{0x15, 0x32}))
	require.NoError(t, err)
	assert.Equal(t, "01795573754248449989-1532", id)
	require.NoError(t, ValidMailID(id))
	later, err := NewMailID(at.Add(time.Nanosecond), bytes.NewReader([]byte{0, 0}))
	require.NoError(t, err)
	assert.Less(t, id, later, "ids sort by time")
	for _, bad := range []string{"", "1795573754248449989-1532", "01795573754248449989_1532", "0179557375424844998x-1532",
		"01795573754248449989-15G2", "../../etc/passwd-aaaaaaa", "01795573754248449989-1532 "} {
		assert.ErrorIs(t, ValidMailID(bad), ErrSyntax, "%q", bad)
	}
}

func TestMailValidate(t *testing.T) {
	ok := Mail{ID: "01795573754248449989-1532", Kind: MailRequest, Pane: "%7", Server: "12-34", Session: "20260101-000000-o6-w7", Seq: 1}
	require.NoError(t, ok.Validate())
	tests := []struct {
		name string
		edit func(m *Mail)
	}{
		{"unknown kind", func(m *Mail) { m.Kind = "letter" }},
		{"bad pane", func(m *Mail) { m.Pane = "7" }},
		{"no server", func(m *Mail) { m.Server = "" }},
		{"request without exchange", func(m *Mail) { m.Seq = 0 }},
		{"question without question", func(m *Mail) { m.Kind = MailQuestion }},
		{"bad id", func(m *Mail) { m.ID = "x" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := ok
			tt.edit(&m)
			assert.ErrorIs(t, m.Validate(), ErrSyntax)
		})
	}
	back, err := ParseMail(FormatMail(ok))
	require.NoError(t, err)
	assert.Equal(t, ok, back)
	_, err = ParseMail([]byte(`{"id":"01795573754248449989-1532","kind":"request","extra":1}`))
	assert.ErrorIs(t, err, ErrSyntax, "unknown fields are refused")
	_, err = ParseMailOutcome(FormatMailOutcome(MailOutcome{Mail: ok, State: "lost"}))
	assert.ErrorIs(t, err, ErrSyntax)
}
