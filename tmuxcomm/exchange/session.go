package exchange

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/paneops/lock"
	"github.com/wcomm/wcomm/tmuxcomm/store"

	"github.com/wcomm/wcomm/messages"
)

// SessionMeta is what wcomm records about a session folder it created.
type SessionMeta struct {
	Server       string          `json:"server"` // paneops.ServerInfo.Key()
	Socket       string          `json:"socket"`
	Orchestrator messages.PaneID `json:"orchestrator"`
	Worker       messages.PaneID `json:"worker"`
	StartedAt    string          `json:"started_at"`
	Created      time.Time       `json:"created"`
	// Host: the folder mirrors exchanges with a worker on that declared host (see package relay);
	// Relayed: its requests came from an orchestrator on another host, so the orchestrator pane
	// named is not on this host's tmux server.
	Host    string `json:"host,omitempty"`
	Relayed bool   `json:"relayed,omitempty"`
}

func ReadMeta(dir string) (*SessionMeta, error) {
	data, err := store.ReadFile(filepath.Join(dir, store.MetaName))
	if err != nil {
		return nil, err
	}
	var m SessionMeta
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, store.MetaName), err)
	}
	return &m, nil
}

// maxSessionBump bounds how many seconds past its creation a session folder's name may be dated:
// when the pair's folder name for this second is taken (another server, a seed folder), the next
// second is tried. A folder can hence be named up to this much later than the ids of its requests.
const maxSessionBump = 100

// OpenSession returns the folder of the newest session of this pair on this server, or creates one.
func (b *Book) OpenSession(root string, orch, worker messages.PaneID, serverKey, socket string) (string, messages.Session, error) {
	return b.OpenMirror(root, "", orch, worker, serverKey, socket)
}

// OpenMirror is OpenSession for the mirror of exchanges with a worker on declared host host
// (remote.go); "" is OpenSession. The host is the call's, so mirrors of several hosts open at
// once, beside sends to this host's panes.
func (b *Book) OpenMirror(root, host string, orch, worker messages.PaneID, serverKey, socket string) (string, messages.Session, error) {
	key := sessionKey{root, host, orch, worker, serverKey, b.Relayed}
	if v, ok := openSessions.Load(key); ok {
		// The folder this process found or made for the pair: while it is there, no other is
		// made for it (a sender finds it first, under the root lock), so it is still the one;
		// unless it was given to another user since, which the listing refuses too.
		o := v.(openSession)
		if st, err := os.Lstat(o.dir); err == nil && st.IsDir() && os.SameFile(st, o.st) && store.CheckOwned(o.dir, st) == nil {
			return o.dir, o.s, nil
		}
		openSessions.Delete(key)
	}
	dir, sess, err := b.openMirror(root, host, orch, worker, serverKey, socket)
	if err == nil {
		if st, serr := os.Lstat(dir); serr == nil {
			openSessions.Store(key, openSession{dir: dir, s: sess, st: st})
		}
	}
	return dir, sess, err
}

// openSessions remembers, for this process, the session folder of each pair it sends between
// (sessionKey): a long-lived caller (the MCP server) then sends without listing the root, whose
// folders grow with every pair that ever exchanged, under the root's lock at every send.
var openSessions sync.Map

type sessionKey struct {
	root, host   string
	orch, worker messages.PaneID
	server       string
	relayed      bool
}

type openSession struct {
	dir string
	s   messages.Session
	st  os.FileInfo // the folder as found: one removed and made anew is another
}

func (b *Book) openMirror(root, host string, orch, worker messages.PaneID, serverKey, socket string) (string, messages.Session, error) {
	unlock, err := lock.File(filepath.Join(root, store.RootLockName), syscall.LOCK_EX, b.LockTimeout)
	if err != nil {
		return "", messages.Session{}, fmt.Errorf("lock root %s: %w", root, err)
	}
	defer unlock()

	entries, err := os.ReadDir(root)
	if err != nil {
		return "", messages.Session{}, fmt.Errorf("read root %s: %w", root, err)
	}
	var best string
	var bestS messages.Session
	for _, ent := range entries {
		s, err := messages.ParseSessionName(ent.Name())
		if err != nil || !ent.IsDir() || s.Orchestrator != orch || s.Worker != worker {
			continue
		}
		if st, err := ent.Info(); err != nil || store.CheckOwned(filepath.Join(root, ent.Name()), st) != nil {
			continue // planted by another user: its meta and files are not ours to trust
		}
		m, err := ReadMeta(filepath.Join(root, ent.Name()))
		if err != nil || m.Server != serverKey || m.Host != host || m.Relayed != b.Relayed {
			continue
		}
		if ent.Name() > best {
			best, bestS = ent.Name(), s
		}
	}
	if best != "" {
		return filepath.Join(root, best), bestS, nil
	}
	now := b.Now()
	for i := 0; i < maxSessionBump; i++ {
		s := messages.Session{StartedAt: now.Add(time.Duration(i) * time.Second).Format(messages.StampLayout), Orchestrator: orch, Worker: worker}
		dir := filepath.Join(root, s.Name())
		if err := os.Mkdir(dir, store.DirMode); err != nil {
			if errors.Is(err, fs.ErrExist) {
				// Same pair, same second, another server (or a seed folder): take the next second.
				continue
			}
			return "", messages.Session{}, fmt.Errorf("create session folder %s: %w", dir, err)
		}
		meta, _ := json.MarshalIndent(SessionMeta{Server: serverKey, Socket: socket, Orchestrator: orch,
			Worker: worker, StartedAt: s.StartedAt, Created: now, Host: host, Relayed: b.Relayed}, "", "  ")
		if err := store.WriteAtomic(filepath.Join(dir, store.MetaName), append(meta, '\n')); err != nil {
			os.RemoveAll(dir)
			return "", messages.Session{}, err
		}
		return dir, s, nil
	}
	return "", messages.Session{}, fmt.Errorf("no free session folder name for o%d-w%d in %s", orch.Num(), worker.Num(), root)
}

// seqFile is one numbered file of a session folder.
type seqFile struct {
	N    int
	Kind messages.Kind
	Name string
}

// ListSeq returns the numbered files of a folder in number order.
func ListSeq(dir string) ([]seqFile, []string, error) {
	// Names only: os.ReadDir would also sort every entry by name, a third of the cost in a folder
	// of thousands of files, and the numbered ones are sorted by number below anyway.
	d, err := os.Open(dir)
	if err != nil {
		return nil, nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, nil, err
	}
	files, other := classifySeq(names)
	return files, other, nil
}

// classifySeq sorts a folder's names into its numbered files, in number order, and the names
// that are not the protocol's (hidden names, delivery logs and question files are neither).
func classifySeq(names []string) ([]seqFile, []string) {
	var files []seqFile
	var other []string
	for _, name := range names {
		if n, k, ok := messages.ParseSeqFileName(name); ok {
			files = append(files, seqFile{N: n, Kind: k, Name: name})
			continue
		}
		if name[0] == '.' || IsSidecar(name) || IsQuestionFile(name) {
			continue
		}
		other = append(other, name)
	}
	sort.Slice(files, func(i, j int) bool {
		if files[i].N != files[j].N {
			return files[i].N < files[j].N
		}
		if files[i].Kind != files[j].Kind {
			return files[i].Kind < files[j].Kind
		}
		return files[i].Name < files[j].Name
	})
	sort.Strings(other)
	return files, other
}

// nextRequestNumber is the first number after every numbered file, leaving N+1 free for the
// response of the newest request: a request and its response are always N and N+1.
func nextRequestNumber(files []seqFile) int {
	if len(files) == 0 {
		return 1
	}
	max := 0
	var maxKind messages.Kind
	for _, f := range files {
		if f.N > max || (f.N == max && f.Kind == messages.KindRequest) {
			max, maxKind = f.N, f.Kind
		}
	}
	if maxKind == messages.KindRequest {
		return max + 2
	}
	return max + 1
}

// ClaimRequest writes build(n) as the next request file n of dir and returns n and the path. The
// link(2) claim is atomic across processes: a lost race rescans and takes the next number. The
// content depends on n (it names the response file n+1), so it is built per attempt. Its fsync
// is one of syncs (store.WriteExclusiveLater; nil: before it is published).
func ClaimRequest(dir string, syncs *store.Syncs, build func(n int) ([][]byte, error)) (int, string, error) {
	return claimRequest(dir, syncs, nil, build)
}

// Numbers tells a folder's next request number from what its process saw made there since it last
// looked, without looking at the folder's files again (a process that lives on and watches the
// folders it sends into: an MCP server). Mark is taken before a look at the files (0: nothing
// watched); Claimed records the number a claim took after the look that began at that mark; Next
// says the next number and the mark it stands on, ok false when it cannot tell.
type Numbers interface {
	Mark(dir string) uint64
	Next(dir string) (n int, mark uint64, ok bool)
	Claimed(dir string, n int, mark uint64)
}

func claimRequest(dir string, syncs *store.Syncs, nums Numbers, build func(n int) ([][]byte, error)) (int, string, error) {
	claim := func(n int, mark uint64) (string, error) {
		path := filepath.Join(dir, messages.SeqFileName(n, messages.KindRequest))
		parts, err := build(n)
		if err != nil {
			return "", err
		}
		if err := store.WriteExclusiveLater(path, syncs, parts...); err != nil {
			return "", err
		}
		writeSeqHint(dir, n)
		if nums != nil && mark != 0 {
			nums.Claimed(dir, n, mark)
		}
		return path, nil
	}
	var mark uint64
	if nums != nil {
		if n, at, ok := nums.Next(dir); ok {
			path, err := claim(n, at)
			if err == nil {
				return n, path, nil
			}
			if !errors.Is(err, store.ErrExists) {
				return 0, "", err
			}
			// Another sender took n first: the files decide.
		}
		mark = nums.Mark(dir)
	}
	if h, ok := readSeqHint(dir); ok {
		if n, ok := nextFromHint(dir, h); ok {
			path, err := claim(n, mark)
			if err == nil {
				return n, path, nil
			}
			if !errors.Is(err, store.ErrExists) {
				return 0, "", err
			}
			// Another sender took n first: the listing decides.
		}
	}
	for attempt := 0; attempt < 1000; attempt++ {
		files, _, err := ListSeq(dir)
		if err != nil {
			return 0, "", err
		}
		n := nextRequestNumber(files)
		path, err := claim(n, mark)
		if err == nil {
			return n, path, nil
		}
		if !errors.Is(err, store.ErrExists) {
			return 0, "", err
		}
	}
	return 0, "", fmt.Errorf("could not claim a request number in %s", dir)
}

// MirrorHost returns the host an exchange's session folder mirrors ("" for a local one).
func MirrorHost(x *Exchange) string {
	if x == nil {
		return ""
	}
	m, err := ReadMeta(x.Dir)
	if err != nil {
		return ""
	}
	return m.Host
}

// IsQuestionFile reports whether name is one of the question relay's files in a session folder,
// so exchange listings need not count it as foreign.
func IsQuestionFile(name string) bool {
	_, _, _, ok := messages.ParseQuestionFileName(name)
	return ok
}

// WriteRequest claims the next request number in the session folder dir and writes a request
// there: header h, then body from the caller's bytes (a message of megabytes is never copied into
// the file's text), then the instructions naming its response file. It returns the number, the
// file's path and the parts written, whose join is the file. Its fsync is one of syncs (nil:
// before it is published).
func (b *Book) WriteRequest(dir string, sess messages.Session, h messages.RequestHeader, body []byte, syncs *store.Syncs) (int, string, [][]byte, error) {
	n, path, parts, _, err := b.writeRequest(dir, sess, h, body, syncs, false)
	return n, path, parts, err
}

// WriteNewRequest is WriteRequest for a request without an id yet: the id is claimed once the
// request's number is known, by its where-link (ClaimIDAt), so one new file both claims the id
// and records where its request is. It returns the id as well.
func (b *Book) WriteNewRequest(dir string, sess messages.Session, h messages.RequestHeader, body []byte, syncs *store.Syncs) (n int, path string, parts [][]byte, id string, err error) {
	return b.writeRequest(dir, sess, h, body, syncs, true)
}

func (b *Book) writeRequest(dir string, sess messages.Session, h messages.RequestHeader, body []byte, syncs *store.Syncs, claim bool) (int, string, [][]byte, string, error) {
	openEnd := len(body) > 0 && body[len(body)-1] != '\n'
	var parts [][]byte
	n, path, err := claimRequest(dir, syncs, b.Numbers, func(n int) ([][]byte, error) {
		if claim {
			id, err := b.ClaimIDAt(filepath.Dir(dir), filepath.Base(dir), n)
			if err != nil {
				return nil, err
			}
			h.ID = id
		}
		resp := filepath.Join(dir, messages.SeqFileName(n+1, messages.KindResponse))
		head, tail := messages.FormatRequestAround(messages.Request{Header: h,
			Instructions: messages.Instructions{
				ResponsePath: resp,
				Notify:       b.NotifyCommand(resp),
				Fallback:     messages.FallbackCommand(sess, resp),
			}}, openEnd)
		parts = [][]byte{[]byte(head), body, []byte(tail)}
		return parts, nil
	})
	return n, path, parts, h.ID, err
}
