package bridge

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wcomm/wcomm/internal/bridge/lockfile"
	files "github.com/wcomm/wcomm/tmuxcomm/store"
)

// stateFile is the bridge's state in its folder (lockfile.Dir): what was posted where, tokens,
// the answer under way; 0600, replaced atomically after each change. Its name is the store's map's.
const stateFile = files.BridgeStateName

// Dir is the folder under root of the bridge of the channels named key.
func Dir(root, key string) string { return lockfile.Dir(root, key) }

// Post is one question posted on one channel.
type Post struct {
	Channel  string    `json:"channel"`
	ID       string    `json:"id"`
	Ref      string    `json:"ref"`
	PostedAt time.Time `json:"posted_at"`
	// Closed is set once the post says the question is decided.
	Closed bool `json:"closed,omitempty"`
	// Refused is the service's permanent refusal of the post, in its words (Ref is then ""):
	// the question is not posted there, and not tried again, so it holds up no other.
	Refused string `json:"refused,omitempty"`
}

// State is state.json.
type State struct {
	// Posts by channel, then question id.
	Posts map[string]map[string]*Post `json:"posts"`
	// Tokens: the short token of each question id.
	Tokens map[string]string `json:"tokens"`
	// TelegramOffset is the next getUpdates offset of a bridge of an older wcomm: the offset is
	// now the bot's, kept where its bridges meet (share.go), and starts from this one once.
	TelegramOffset int64 `json:"telegram_offset,omitempty"`
	// Applying is the answer the bridge is giving (or last gave): written before the engine
	// records it, so that a bridge killed before it confirmed the update to the service knows,
	// when the service sends that update again, that the answer recorded is that person's own.
	Applying *Applying `json:"applying,omitempty"`
	// SlackSeen are the ids of the last Slack messages handled (Slack redelivers an envelope
	// whose ack it missed).
	SlackSeen []string `json:"slack_seen,omitempty"`
	// NoticesSince is when the state began (less noticeGrace): dead letters that ended before it
	// are not told.
	NoticesSince time.Time `json:"notices_since"`
	// Notices by channel, then mail id: when each dead letter was told there.
	Notices map[string]map[string]time.Time `json:"notices,omitempty"`
	// Unpostable are the questions the bridge posts nowhere, by id (or, for a file that does not
	// load, by what is wrong with it), with the reason: larger than an ask writes, not valid.
	Unpostable map[string]string `json:"unpostable,omitempty"`
}

// Applying is one answer from a channel on its way to the engine.
type Applying struct {
	Event string `json:"event"` // the channel's name for what carried it (a Telegram update id)
	ID    string `json:"id"`    // the question
}

// store is the state in memory with its file, safe for the bridge's goroutines.
type store struct {
	mu   sync.Mutex
	path string
	s    State
}

// ReadState reads the state of the bridge of root's channels named key, creating nothing;
// none is an empty state.
func ReadState(root, key string) (State, error) {
	var s State
	path := filepath.Join(Dir(root, key), stateFile)
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func openStore(dir string) (*store, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create %s: %w", dir, err)
	}
	st := &store{path: filepath.Join(dir, stateFile)}
	data, err := os.ReadFile(st.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("read %s: %w", st.path, err)
	default:
		if err := json.Unmarshal(data, &st.s); err != nil {
			return nil, fmt.Errorf("%s: %w; move it away to start afresh (questions may then be posted again)", st.path, err)
		}
	}
	if st.s.Posts == nil {
		st.s.Posts = map[string]map[string]*Post{}
	}
	if st.s.Tokens == nil {
		st.s.Tokens = map[string]string{}
	}
	if st.s.Notices == nil {
		st.s.Notices = map[string]map[string]time.Time{}
	}
	if st.s.Unpostable == nil {
		st.s.Unpostable = map[string]string{}
	}
	if st.s.NoticesSince.IsZero() {
		// A little before now: a bridge started on demand to tell a notice (a held request, a
		// pane not restarted again) was started just after it was written, and tells it.
		st.s.NoticesSince = time.Now().UTC().Add(-noticeGrace)
		if err := st.saveLocked(); err != nil {
			return nil, fmt.Errorf("write %s: %w", st.path, err)
		}
	}
	return st, nil
}

// saveLocked writes the state whole, atomically; the caller holds mu. A state is on disk
// before the bridge acts on it being so.
func (st *store) saveLocked() error {
	data, err := json.MarshalIndent(st.s, "", "  ")
	if err != nil {
		return err
	}
	return files.WriteFile(st.path, append(data, '\n'), 0o600)
}

// update runs f on the state under the lock and saves it.
func (st *store) update(f func(*State)) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
	return st.saveLocked()
}

// view runs f on the state under the lock.
func (st *store) view(f func(*State)) {
	st.mu.Lock()
	defer st.mu.Unlock()
	f(&st.s)
}

// noticeGrace is how long before a new state began a notice is still told: the notices that
// started the bridge, not a week of old news.
const noticeGrace = time.Minute
