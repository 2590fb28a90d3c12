package settings

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoopsBlock(t *testing.T) {
	assert.Equal(t, Loops{Rate: 20, Per: 10 * time.Minute, ChainDepth: 10}, Defaults().Loops, "sane caps without settings")

	s := Defaults()
	require.NoError(t, s.applyData("c.yaml", []byte("loops:\n  rate: 5/1m\n  chain_depth: 3\n  inbound:\n    - {from: \"gpu1:*\", policy: refuse}\n    - {from: codex, policy: hold}\n"), true, true))
	assert.Equal(t, Loops{Rate: 5, Per: time.Minute, ChainDepth: 3, Inbound: []InboundRule{{"gpu1:*", PolicyRefuse}, {"codex", PolicyHold}}}, s.Loops)

	s = Defaults()
	require.NoError(t, s.applyData("c.yaml", []byte("loops:\n  rate: off\n  chain_depth: 0\n"), true, true))
	assert.Equal(t, 0, s.Loops.Rate)
	assert.Equal(t, 0, s.Loops.ChainDepth)

	s = Defaults()
	require.NoError(t, s.applyData(".wcomm.yaml", []byte("loops:\n  rate: 1000/1s\n"), false, false))
	assert.Equal(t, DefaultLoops(), s.Loops, "an untrusted project file cannot raise the caps")
	assert.Contains(t, s.Ignored, "loops")

	for _, bad := range []string{
		"loops:\n  rate: 20\n",
		"loops:\n  rate: 0/10m\n",
		"loops:\n  rate: 5/-1m\n",
		"loops:\n  chain_depth: -1\n",
		"loops:\n  inbound:\n    - {from: x, policy: maybe}\n",
		"loops:\n  inbound:\n    - {policy: hold}\n",
		"loops:\n  inbound:\n    - {from: \"[\", policy: hold}\n",
		"loops:\n  rates: 5/1m\n",
	} {
		s := Defaults()
		assert.Error(t, s.applyData("c.yaml", []byte(bad), true, true), "%q", bad)
	}
}
