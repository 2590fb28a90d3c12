package watch

// Readers and detail builders the watch feed shares: log lines read from where the last read
// stopped, question records decoded into their writer's types.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/exchange"
	"github.com/wcomm/wcomm/tmuxcomm/questions"
)

// logEventName is the watch's name for a question log's state: refused and late answer attempts
// are named for what they were; other states keep the names the log gives them.
func logEventName(state string) string {
	switch state {
	case questions.QInvalid:
		return EventAnswerInvalid
	case questions.QStale:
		return EventAnswerLate
	}
	return state
}

// logDetail is an event's detail from a question log line's: the attempt's text as typed, why it
// was refused, who gave it and where.
func logDetail(d map[string]string) map[string]string {
	answer := d["raw"]
	if answer == "" {
		answer = d["answer"]
	}
	reason := d["reason"]
	if reason == "" {
		reason = d["error"]
	}
	return details("answer", answer, "reason", reason, "by", d["decided_by"], "source", d["source"], "pane", d["pane"])
}

// details builds an event's detail from name, value pairs, each value made one short, sanitized
// line; empty values are left out.
func details(kv ...string) map[string]string {
	out := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		if v := exchange.FirstLine(kv[i+1]); v != "" {
			out[kv[i]] = v
		}
	}
	return out
}

// questionID returns the valid question id a question record holds, else def.
func questionID(rec questions.QuestionRecord, def string) string {
	if _, err := messages.ParseQuestionID(rec.ID); err == nil {
		return rec.ID
	}
	return def
}

func timeOr(t, def time.Time) time.Time {
	if t.IsZero() {
		return def
	}
	return t
}

// readRecord decodes a question file into the record type its writer wrote (files are written
// atomically, so one that exists is whole). A file that does not decode is still reported, with
// bad saying why, rather than silently skipped; ok is false only when there is no file to report.
func readRecord[T any](path string) (rec T, mtime time.Time, bad string, ok bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return rec, time.Time{}, "", false
	}
	data, err := store.ReadFile(path)
	if err != nil {
		return rec, st.ModTime(), err.Error(), true
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return rec, time.Time{}, "", false
	}
	if err := json.Unmarshal(data, &rec); err != nil {
		return rec, st.ModTime(), fmt.Sprintf("not a valid %s file: %v", filepath.Ext(path)[1:], err), true
	}
	return rec, st.ModTime(), "", true
}

// readNewLines calls fn with each complete line of path from off on and returns the offset after
// the last complete line: a line still being appended is read next time. A line longer than the
// read buffer (64 KiB; log lines are a few hundred bytes) is skipped whole. A file shorter than off
// was replaced, and is read again from its start.
func readNewLines(path string, off int64, fn func([]byte)) int64 {
	fl, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return off
	}
	defer fl.Close()
	st, err := fl.Stat()
	if err != nil || !st.Mode().IsRegular() {
		return off
	}
	if st.Size() < off {
		off = 0
	}
	if _, err := fl.Seek(off, io.SeekStart); err != nil {
		return off
	}
	r := bufio.NewReaderSize(fl, 64<<10)
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			skipped := int64(len(line))
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				skipped += int64(len(line))
			}
			if err != nil {
				return off // the long line is still being written
			}
			off += skipped
			continue
		}
		if err != nil {
			return off
		}
		off += int64(len(line))
		if l := bytes.TrimSpace(line); len(l) > 0 {
			fn(l)
		}
	}
}
