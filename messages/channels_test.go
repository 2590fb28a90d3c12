package messages

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestChannelsKey(t *testing.T) {
	tg := func(file string, chat int64) *ChannelsConfig {
		return &ChannelsConfig{Telegram: &TelegramConfig{TokenFile: file, ChatID: chat, AllowedUsers: []int64{7}}}
	}
	tests := []struct {
		name       string
		a, b       *ChannelsConfig
		dirA, dirB string
		same       bool
	}{
		{"same block, any folder", tg("/t/tok", 1), tg("/t/tok", 1), "/p", "/q", true},
		{"another chat", tg("/t/tok", 1), tg("/t/tok", 2), "/p", "/p", false},
		{"a relative token file is another file in another folder", tg("tok", 1), tg("tok", 1), "/p", "/q", false},
		{"a relative token file is the absolute one", tg("tok", 1), tg("/p/tok", 1), "/p", "/p", true},
		{"a home token file is the same in every folder", tg("~/tok", 1), tg("~/tok", 1), "/p", "/q", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, kb := tt.a.Key(tt.dirA), tt.b.Key(tt.dirB)
			assert.True(t, ValidChannelsKey(ka), ka)
			assert.Equal(t, tt.same, ka == kb)
		})
	}
	var none *ChannelsConfig
	assert.Equal(t, NoChannelsKey, none.Key("/p"))
	assert.Equal(t, NoChannelsKey, (&ChannelsConfig{}).Key("/p"))
	assert.False(t, ValidChannelsKey(NoChannelsKey))
	assert.False(t, ValidChannelsKey("../../../etc/x"))
}
