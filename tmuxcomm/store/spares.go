package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
)

// Spare files. A process that lives on (an MCP server) writes requests, responses and the
// delivery logs beside them into the same few session folders again and again, and the create
// of each new file was the dearest step of those writes: on ext4 without a journal a create
// skips every inode freed in the last minutes (recently_deleted in ext4's ialloc.c, see
// WriteSwapNoSync), measured at 0.2-0.3 ms a file after a folder of old sessions was removed,
// three files a round trip. A spare is an empty hidden temp file made in a folder ahead of
// time, by a goroutine that runs while the process waits for its next call or for the
// resident, and taken by the next write there: the write is then a write and a rename, and
// the create is off the message's path. The CPU is the same; the wait is not.
//
// A spare is an ordinary temp file (TempPrefix): a process killed with spares in hand leaves
// them empty, where a killed writer leaves a temp file too, and every listing skips them.
// Only the writes of the protocol's records take spares (WriteExclusiveLater, AppendLine).
//
// A spare is made only while no message is on its way in the process (Busy): the servers run
// with one P, and a spare made the moment one was taken held that P in its create while the send
// that took it had tmux's answer waiting (seen in a trace of the resident: two creates between
// the fsync and the outbox record). Measured, handed sends taking turns with three tmux calls:
// the same on a quiet disk (0.64-0.68 of the three calls both ways), 0.90 -> 0.83 in the seconds
// after 20,000 files were removed, when a create takes a millisecond.

// TempPrefix begins the name of every temp file the store makes in a folder.
const TempPrefix = ".tmp-"

const (
	sparesPerDir = 2 // a request (or response) and its delivery log
	spareDirs    = 8 // folders kept in hand at most, the ones written last
)

type spareFile struct {
	fd   int
	name string
}

var spares struct {
	on     atomic.Bool
	mu     sync.Mutex
	making sync.Mutex // held while a spare is made and put in hand
	users  int
	dirs   map[string][]spareFile
	lru    []string // the folders of dirs, the one written last at the end
	want   chan string
	busy   int // messages on their way (Busy), less the waits among them (Waiting)
}

// sparesIdle is signalled, under spares.mu, when the last Busy ends.
var sparesIdle = sync.NewCond(&spares.mu)

// Busy marks a message on its way in this process, from its first write to its paste and the
// records of both: no spare is made until it, and every other, has called the release it
// returns. A process that keeps no spares may call it as well.
func Busy() (release func()) {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	return addBusy(1)
}

// addBusy adds d to the count of messages on their way (under spares.mu) and returns the
// undoing of it, which runs once.
func addBusy(d int) (undo func()) {
	countBusy(d)
	return sync.OnceFunc(func() {
		spares.mu.Lock()
		defer spares.mu.Unlock()
		countBusy(-d)
	})
}

// countBusy adds d to the count (under spares.mu) and wakes the maker when none is left.
func countBusy(d int) {
	if spares.busy += d; spares.busy <= 0 {
		sparesIdle.Broadcast()
	}
}

// KeepSpares makes this process keep spares in the folders it writes requests, responses and
// logs in, from the second write there on, until every caller has called the release it
// returns, which then removes them. For a process that lives on (a server: a test may run
// several in one process).
func KeepSpares() (release func()) {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	spares.users++
	if spares.users == 1 {
		spares.dirs = map[string][]spareFile{}
		spares.lru = nil
		if spares.want == nil {
			spares.want = make(chan string, spareDirs)
			go makeSpares(spares.want)
		}
		spares.on.Store(true)
	}
	var once sync.Once
	return func() { once.Do(dropSpares) }
}

// dropSpares lets one user of KeepSpares go; the last removes the spares and makes no more.
func dropSpares() {
	// No spare is being made meanwhile (making), so none is left in a folder once this returns:
	// a folder removed next would otherwise find one made in it after.
	spares.making.Lock()
	defer spares.making.Unlock()
	spares.mu.Lock()
	defer spares.mu.Unlock()
	if spares.users--; spares.users > 0 {
		return
	}
	spares.on.Store(false)
	for _, list := range spares.dirs {
		for _, f := range list {
			dropSpare(f)
		}
	}
	spares.dirs = nil
	spares.lru = nil
}

func dropSpare(f spareFile) {
	syscall.Close(f.fd)
	os.Remove(f.name)
}

// Waiting marks a wait within a message's way (an await's, for the response): spares may be
// made meanwhile, until the resume it returns is called. While no Busy is counted it does
// nothing (an await of a process that marks none).
func Waiting() (resume func()) {
	spares.mu.Lock()
	defer spares.mu.Unlock()
	if spares.busy == 0 {
		return func() {}
	}
	return addBusy(-1)
}

// sparesWaitHook, when a test sets it, is called (under spares.mu) each time the maker waits for
// the messages on their way to end.
var sparesWaitHook func()

// makeSpares fills the folders asked for up to sparesPerDir, one at a time, while no message is
// on its way (Busy).
func makeSpares(want <-chan string) {
	for dir := range want {
		for {
			spares.mu.Lock()
			for spares.busy > 0 && spares.on.Load() {
				if sparesWaitHook != nil {
					sparesWaitHook()
				}
				sparesIdle.Wait()
			}
			list, known := spares.dirs[dir]
			full := !spares.on.Load() || !known || len(list) >= sparesPerDir
			spares.mu.Unlock()
			if full {
				break
			}
			spares.making.Lock()
			f, err := createTemp(dir)
			if err != nil {
				spares.making.Unlock()
				break
			}
			spares.mu.Lock()
			if _, known := spares.dirs[dir]; spares.on.Load() && known {
				spares.dirs[dir] = append(spares.dirs[dir], f)
				f.fd = -1
			}
			spares.mu.Unlock()
			if f.fd >= 0 {
				dropSpare(f) // the folder was let go meanwhile
			}
			spares.making.Unlock()
		}
	}
}

// tempSeq makes temp names unique within the process; the random part, across processes.
var tempSeq atomic.Uint64

// createTemp creates an empty temp file in dir, open for reading and writing, under a name
// unique within the process (tempSeq) and across processes (the random part).
func createTemp(dir string) (spareFile, error) {
	for try := 0; ; try++ {
		var b [4]byte
		_, _ = rand.Read(b[:])
		name := filepath.Join(dir, TempPrefix+strconv.FormatUint(tempSeq.Add(1), 36)+"-"+hex.EncodeToString(b[:]))
		fd, err := openFD(name, os.O_RDWR|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, FileMode)
		if err == nil {
			return spareFile{fd: fd, name: name}, nil
		}
		if !errors.Is(err, fs.ErrExist) || try == 100 {
			return spareFile{}, err
		}
	}
}

// takeSpare gives a spare in dir, still empty and still at its name, or nil, and asks for the
// folder to be filled again. The first call for a folder only makes it one the process keeps.
func takeSpare(dir string) *os.File {
	if !spares.on.Load() {
		return nil
	}
	spares.mu.Lock()
	if !spares.on.Load() {
		spares.mu.Unlock()
		return nil
	}
	f := spareFile{fd: -1}
	list, known := spares.dirs[dir]
	if n := len(list); n > 0 {
		f, spares.dirs[dir] = list[n-1], list[:n-1]
	}
	if i := slices.Index(spares.lru, dir); i >= 0 {
		spares.lru = append(slices.Delete(spares.lru, i, i+1), dir)
	} else {
		spares.lru = append(spares.lru, dir)
	}
	if !known {
		spares.dirs[dir] = nil
		if len(spares.lru) > spareDirs {
			old := spares.lru[0]
			spares.lru = spares.lru[1:]
			for _, g := range spares.dirs[old] {
				dropSpare(g)
			}
			delete(spares.dirs, old)
		}
	}
	spares.mu.Unlock()
	select {
	case spares.want <- dir:
	default: // the maker is behind: it fills this folder at its next ask
	}
	if f.fd < 0 {
		return nil
	}
	// The folder may have been removed, or removed and made again, since the spare was made:
	// a spare is used only while its name still leads to it, and it is still empty.
	var have, there syscall.Stat_t
	if syscall.Fstat(f.fd, &have) != nil || syscall.Lstat(f.name, &there) != nil ||
		have.Dev != there.Dev || have.Ino != there.Ino || have.Size != 0 {
		syscall.Close(f.fd)
		return nil
	}
	return os.NewFile(uintptr(f.fd), f.name)
}
