package broadcast

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// recordPath is where broadcast id's record is.
func recordPath(root, id string) string {
	return filepath.Join(root, store.BroadcastsDir, id+".json")
}

func encode(rec *messages.Broadcast) []byte {
	data, _ := json.MarshalIndent(rec, "", "  ") // plain strings, numbers and a time: it encodes
	return append(data, '\n')
}

// claim gives rec a new broadcast id and writes its first record under it, O_EXCL: two senders of
// the same second never share an id.
func (c *Caster) claim(root string, rec *messages.Broadcast) error {
	dir, err := store.Dir(root, store.BroadcastsDir, true)
	if err != nil {
		return err
	}
	for range 16 {
		id, err := messages.NewBroadcastID(c.Now(), c.Rand)
		if err != nil {
			return err
		}
		rec.ID = id
		err = store.WriteExclusive(filepath.Join(dir, id+".json"), encode(rec))
		if errors.Is(err, store.ErrExists) {
			continue
		}
		if err != nil {
			return fmt.Errorf("record broadcast %s: %w; nothing was sent", id, err)
		}
		return nil
	}
	return fmt.Errorf("no free broadcast id this second under %s; try again", root)
}

// Record returns broadcast id's record. Without one (lost, or never written because its sender
// was killed), it is made up from the exchanges whose logs name the broadcast.
func (c *Caster) Record(ctx context.Context, id string) (*messages.Broadcast, error) {
	if err := messages.ValidBroadcastID(id); err != nil {
		return nil, err
	}
	root, found, err := c.ReadRoot()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, store.Kindf(store.ErrNotFound, "no exchanges yet (no root %s)", root)
	}
	data, err := store.ReadFile(recordPath(root, id))
	if err == nil {
		var rec messages.Broadcast
		if err := json.Unmarshal(data, &rec); err == nil && rec.ID == id {
			return &rec, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sessions, _, err := c.Book.History(ctx, exchange.HistoryOptions{})
	if err != nil {
		return nil, err
	}
	rec := &messages.Broadcast{ID: id}
	for _, s := range sessions {
		for _, x := range s.Exchanges {
			if x.Broadcast == id {
				rec.From = x.Orchestrator
				rec.Members = append(rec.Members, messages.BroadcastMember{Target: string(x.Worker), Pane: x.Worker,
					Host: x.Host, Exchange: x.ID, Session: x.Session, Seq: x.Seq})
			}
		}
	}
	if len(rec.Members) == 0 {
		return nil, store.Kindf(store.ErrNotFound, "no broadcast %s under %s; 'wcomm history' lists what was sent", id, root)
	}
	return rec, nil
}

// Shown is a broadcast with each member's exchange as it stands (wcomm show BROADCAST-ID).
type Shown struct {
	Broadcast *messages.Broadcast  `json:"broadcast"`
	Exchanges []*exchange.Exchange `json:"exchanges"`
	// Problems names each member whose exchange could not be read, or that was never sent.
	Problems []string `json:"problems,omitempty"`
}

// ShowBroadcast returns broadcast id's record and every member's exchange whole, in the record's
// order. A member that cannot be read is named in Problems; the others are still shown.
func (c *Caster) ShowBroadcast(ctx context.Context, id string) (*Shown, error) {
	rec, err := c.Record(ctx, id)
	if err != nil {
		return nil, err
	}
	s := &Shown{Broadcast: rec, Exchanges: []*exchange.Exchange{}}
	for _, m := range rec.Members {
		name := m.Target
		if m.Pane != "" {
			name = m.Label()
		}
		if m.Exchange == "" {
			why := "never sent"
			if m.Error != "" {
				why += ": " + m.Error
			}
			s.Problems = append(s.Problems, messages.SanitizeField(name+": "+why))
			continue
		}
		x, err := c.Book.Show(ctx, m.Exchange)
		if err != nil {
			s.Problems = append(s.Problems, messages.SanitizeField(fmt.Sprintf("%s: %v", name, err)))
			continue
		}
		s.Exchanges = append(s.Exchanges, x)
	}
	return s, nil
}
