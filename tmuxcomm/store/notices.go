package store

import (
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Notice is one file ReadNotices read: its name in the folder, its path and its contents.
type Notice struct {
	Name, Path string
	Data       []byte
}

// ReadNotices reads the files of dir whose names end in suffix and that changed at since or later,
// in name order, for the rooms whose notices the person is told once (the mailbox's dead letters and
// held chains, the panes the restart policy gave up on). One older than keep (from now) is told to
// nobody any more: it is removed instead of read. A file that does not read is a problem, named;
// a folder that does not read holds nothing.
func ReadNotices(dir, suffix string, since, now time.Time, keep time.Duration) ([]Notice, []string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil
	}
	var out []Notice
	var problems []string
	for _, ent := range ents {
		info, err := ent.Info()
		if err != nil || !ent.Type().IsRegular() || !strings.HasSuffix(ent.Name(), suffix) || info.ModTime().Before(since) {
			continue
		}
		path := filepath.Join(dir, ent.Name())
		if now.Sub(info.ModTime()) > keep {
			os.Remove(path)
			continue
		}
		data, err := ReadFile(path)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		out = append(out, Notice{Name: ent.Name(), Path: path, Data: data})
	}
	return out, problems
}
