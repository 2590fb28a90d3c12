package chatfake

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Two fakes are two bots: a bridge keeps a bot's offset in a folder named by the API's address and
// the token, and a fake on a port an earlier test's fake had must not find that one's offset.
func TestTelegramFakesAreBotsOfTheirOwn(t *testing.T) {
	a, b := NewTelegram(t), NewTelegram(t)
	assert.NotEqual(t, a.Token, b.Token)
	assert.Regexp(t, `^[0-9]+:[A-Za-z0-9_-]+$`, a.Token, "shaped as the service's tokens")
}
