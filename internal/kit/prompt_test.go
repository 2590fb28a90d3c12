package kit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/wcomm/wcomm/messages"
)

func TestKitPromptExamplesAreWhatTheCodeMakes(t *testing.T) {
	req, err := messages.ParseRequest([]byte(ExampleRequest()))
	require.NoError(t, err)
	assert.Equal(t, ExampleResponsePath(), req.Instructions.ResponsePath)
	assert.Equal(t, messages.ReadOnly, req.Header.Capability)

	q, err := messages.ParseQuestionBlock(exampleQuestion())
	require.NoError(t, err)
	assert.Equal(t, exampleQuestionID, q.ID)
	assert.Equal(t, exampleOptions, q.Options)
	a, err := messages.ParseAnswerBlock(messages.FormatAnswerBlock(messages.Answer{Text: exampleOptions[0], Task: "task-3",
		DecidedBy: messages.DecidedByUser, ID: exampleQuestionID}))
	require.NoError(t, err)
	assert.Equal(t, exampleOptions[0], a.Text)

	d, found, err := messages.ParseDelta(deltaExample)
	require.NoError(t, err)
	require.True(t, found)
	assert.NotEmpty(t, d.Changes)
}
