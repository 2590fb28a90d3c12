package exchange

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// The history's index: one file per session folder in the root's store.HistoryDir, that keeps the
// folder's listing and, for each exchange, its encoding as history prints it with the stamps of
// the three files it was read from (request, response, delivery log). A history of 10,000
// exchanges otherwise opens 30,000 files and parses and encodes each.
//
// The files stay the truth. The listing is used only while the folder carries the stamp it had
// when listed (a name added, removed or renamed changes it); an entry only while its three files
// still carry theirs (inode, size, modification and change times; absent stays absent). An index
// that is missing, damaged (its checksum), of another folder or of another version is rebuilt from
// the files. Only the reader that found it stale writes it, atomically, outside the session folder:
// send and notify never touch it, so the index costs them nothing and cannot block them.
//
// A file changed within the same tick of the file system's clock as it was stamped would keep its
// stamp, so a stamp is trusted only when its change time lies before a reading of that clock taken
// before the reading that stamped it began (as git does with its "racily clean" entries, against
// its index file's time): the change time of the root's index folder, touched then. A file
// changed after that reading changes in that tick or a later one, so its change time is never
// the stamped one again. The files settle as soon as the clock ticks past them (a few
// milliseconds), on any file system and whatever its clock's grain or lag behind the kernel's
// fine clock; a stamp equal to the reading is read again. Where that clock cannot be read (a
// root that cannot be written, a session folder on another file system) the reading's wall-clock
// start less indexSettle stands for it.

// indexSettle is, where the file system's clock cannot be read, how long before a reading began
// a stamped file must have last changed to be trusted: more than the coarsest file system clock
// (FAT's 2 s) and the kernel's coarse clock lag.
const indexSettle = 3 * time.Second

// fsClock is a reading of the clock the file system stamps files with: the change time of the
// root's index folder (created when missing), touched now, and the device it lies on, whose
// clock it is. ok is false when it could not be read (a root that cannot be written).
type fsClock struct {
	ns  int64
	dev uint64
	ok  bool
}

// readFSClock touches the root's index folder and reads its change time back: two system calls.
// Only its times change, which no watcher of the root is woken by (they watch for names).
func readFSClock(root string) fsClock {
	d, err := store.Dir(root, store.HistoryDir, true)
	if err != nil {
		return fsClock{}
	}
	now := []unix.Timespec{{Nsec: unix.UTIME_NOW}, {Nsec: unix.UTIME_NOW}}
	if unix.UtimesNanoAt(unix.AT_FDCWD, d, now, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return fsClock{}
	}
	var st unix.Stat_t
	if unix.Lstat(d, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fsClock{}
	}
	return fsClock{ns: st.Ctim.Nano(), dev: st.Dev, ok: true}
}

// indexMagic opens every index file; another version is rebuilt. Version 2: an exchange's
// encoding holds its broadcast. Version 3: its bound is a reading of the file system's clock
// (or the wall clock less indexSettle), no longer the wall-clock start of the reading. Version 4:
// an exchange's encoding no longer holds BodyBytes and BodySum.
const indexMagic = "wcomm-index 4 "

// indexElem is the prefix of the lines of each encoding the index keeps: that of an exchange in
// history --json (json.MarshalIndent of a session with prefix "    " and indent "  "), so what
// history prints is a copy.
const indexElem = "        "

// castagnoli is the checksum's table, made on first use: making it (8 KB of tables) at start
// was most of the start-up time of this package, and every wcomm command starts it.
var castagnoli = sync.OnceValue(func() *crc32.Table { return crc32.MakeTable(crc32.Castagnoli) })

// fileStamp says which file a name held and how it was when read; the zero value is "absent".
type fileStamp struct {
	ino, size    uint64
	mtime, ctime int64
}

func (s fileStamp) String() string { return string(s.appendTo(nil)) }

// appendTo appends the stamp as String writes it, without fmt: an index holds thousands.
func (s fileStamp) appendTo(b []byte) []byte {
	if s == (fileStamp{}) {
		return append(b, '-')
	}
	// The times as unsigned, so one parse reads them all (a time before 1970 comes back whole).
	b = strconv.AppendUint(b, s.ino, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, s.size, 10)
	b = append(b, ':')
	b = strconv.AppendUint(b, uint64(s.mtime), 10)
	b = append(b, ':')
	return strconv.AppendUint(b, uint64(s.ctime), 10)
}

func parseStamp(f string) (fileStamp, bool) {
	if f == "-" {
		return fileStamp{}, true
	}
	var p [4]uint64
	for i := range p {
		field, rest, _ := strings.Cut(f, ":")
		n, err := strconv.ParseUint(field, 10, 64)
		if err != nil || (i < 3) != (rest != "") {
			return fileStamp{}, false
		}
		p[i], f = n, rest
	}
	return fileStamp{ino: p[0], size: p[1], mtime: int64(p[2]), ctime: int64(p[3])}, true
}

// settled reports whether every stamped file last changed before bound (unix ns), a reading of
// the file system's clock (fsClock).
func settled(bound int64, stamps ...fileStamp) bool {
	for _, f := range stamps {
		if f != (fileStamp{}) && f.ctime >= bound {
			return false
		}
	}
	return true
}

// stamper stamps a session folder and its files, by name relative to the folder's descriptor: a
// history stamps thousands, and a whole path is looked up again component by component each time.
type stamper struct {
	fd   int
	st   unix.Stat_t
	name []byte
}

func openStamper(dir string) (*stamper, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return &stamper{fd: fd, name: make([]byte, 0, 32)}, nil
}

func (s *stamper) close() {
	if s != nil {
		unix.Close(s.fd)
	}
}

func (s *stamper) stampOf() fileStamp {
	return fileStamp{ino: s.st.Ino, size: uint64(s.st.Size), mtime: s.st.Mtim.Nano(), ctime: s.st.Ctim.Nano()}
}

// folder stamps the folder itself, and says which device it lies on.
func (s *stamper) folder() (fileStamp, uint64, bool) {
	if err := unix.Fstat(s.fd, &s.st); err != nil {
		return fileStamp{}, 0, false
	}
	return s.stampOf(), s.st.Dev, true
}

// stamp stats one name without following a symlink; ok is false when it could not be told.
func (s *stamper) stamp(name string) (fileStamp, bool) {
	err := unix.Fstatat(s.fd, name, &s.st, unix.AT_SYMLINK_NOFOLLOW)
	for err == unix.EINTR {
		err = unix.Fstatat(s.fd, name, &s.st, unix.AT_SYMLINK_NOFOLLOW)
	}
	if err == unix.ENOENT {
		return fileStamp{}, true
	}
	if err != nil {
		return fileStamp{}, false
	}
	return s.stampOf(), true
}

// readStamp is the stamp of a file as it was opened to be read: the read and the stamp are of
// the same file, with no stat of its own. ok is false when it could not be told.
type readStamp struct {
	stamp fileStamp
	ok    bool
}

// set stamps from the status of the file opened (err nil) or from its absence; any other failure
// leaves it untold. A nil receiver stamps nothing.
func (r *readStamp) set(st syscall.Stat_t, err error) {
	if r == nil {
		return
	}
	switch {
	case err == nil:
		r.stamp = fileStamp{ino: st.Ino, size: uint64(st.Size), mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano()}
		r.ok = true
	case errors.Is(err, fs.ErrNotExist):
		r.stamp, r.ok = fileStamp{}, true
	default:
		r.stamp, r.ok = fileStamp{}, false
	}
}

// fileReads is how a history reads an exchange's three files: by name in their folder, open as
// dirfd, and each stamped from the open it was read through. A nil one reads by whole path and
// stamps nothing.
type fileReads struct {
	dirfd  int
	stamps [3]readStamp // the request, the response, the delivery log (indexEntry.stamps)
	// plain: read by whole path and stamp nothing, as a nil one, with what follows.
	plain bool
	// request is the request's text as this call already read or wrote it, not read again
	// (nil: it is read); keep asks loadExchange to keep the text it reads for a Reload.
	request *knownText
	keep    bool
	// response is the response's text as this call already read it (nil: it is read);
	// noResponse: the response is not looked at (the caller looks at it itself).
	response   *knownText
	noResponse bool
	// log is the delivery log as this call read it, taken again while the file's stamp is
	// unchanged (see knownLog).
	log *knownLog
}

// knownLog is a delivery log's events and problems as a call read them, with the stamp of the
// file they came from.
type knownLog struct {
	events   []Event
	problems []string
	stamp    fileStamp
}

// current reports whether the log at path is still the one read: the same inode of the same size,
// modified and changed at the same instants. The log is only ever appended to (LogEvent), and an
// append moves its size and times, so an unchanged stamp is an unchanged text: one stat instead of
// an open, a read and a close.
func (l *knownLog) current(path string) bool {
	var st syscall.Stat_t
	var rs readStamp
	err := syscall.Lstat(path, &st)
	if err != nil {
		err = &fs.PathError{Op: "lstat", Path: path, Err: err}
	}
	rs.set(st, err)
	return rs.ok && rs.stamp == l.stamp
}

// knownText is a request file's text and modification time, as a call read or wrote it.
type knownText struct {
	data  string
	mtime time.Time
}

// text reads path as store.ReadFileText does, stamping it as file i.
func (r *fileReads) text(path string, i int) (string, time.Time, error) {
	if r != nil && i == 0 && r.request != nil {
		return r.request.data, r.request.mtime, nil
	}
	if r != nil && i == 1 && r.response != nil {
		return r.response.data, r.response.mtime, nil
	}
	if r == nil || r.plain {
		return store.ReadFileText(path)
	}
	data, st, err := store.ReadFileTextStatAt(r.dirfd, path)
	r.stamps[i].set(st, err)
	return data, statMtime(st), err
}

// bytes reads path as store.ReadFile does, stamping it as file i.
func (r *fileReads) bytes(path string, i int) ([]byte, error) {
	if r == nil {
		return store.ReadFile(path)
	}
	if r.plain {
		// Stamped too (the same open's status), so that a Reload can tell the log unchanged.
		data, st, err := store.ReadFileStat(path)
		r.stamps[i].set(st, err)
		return data, err
	}
	data, st, err := store.ReadFileStatAt(r.dirfd, path)
	r.stamps[i].set(st, err)
	return data, err
}

// stamped is the three stamps of the reads; ok is false when one was not told.
func (r *fileReads) stamped() ([3]fileStamp, bool) {
	var out [3]fileStamp
	for i, s := range r.stamps {
		if !s.ok {
			return out, false
		}
		out[i] = s.stamp
	}
	return out, true
}

// statMtime is st's modification time; zero for a file that could not be opened (st unset).
func statMtime(st syscall.Stat_t) time.Time {
	if st.Ino == 0 && st.Mtim.Sec == 0 && st.Mtim.Nsec == 0 {
		return time.Time{}
	}
	return time.Unix(st.Mtim.Unix())
}

// stamps stamps the three files of request n, in the order of indexEntry.stamps; ok is false
// when one could not be told.
func (s *stamper) stamps(n int) ([3]fileStamp, bool) {
	var out [3]fileStamp
	for i, name := range [3]struct {
		n      int
		suffix string
	}{{n, "-request.md"}, {n + 1, "-response.md"}, {n, "-delivery.jsonl"}} {
		s.name = appendSeqName(s.name[:0], name.n, name.suffix)
		f, ok := s.stamp(string(s.name))
		if !ok {
			return out, false
		}
		out[i] = f
	}
	return out, true
}

// appendSeqName appends messages.SeqFileName's or LogName's name without fmt: "%03d" then the
// suffix ("-request.md", "-response.md", "-delivery.jsonl"). A history names thousands.
func appendSeqName(b []byte, n int, suffix string) []byte {
	for d := 100; d > 1 && n < d; d /= 10 {
		b = append(b, '0')
	}
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, suffix...)
}

// indexEntry is one exchange of an index.
type indexEntry struct {
	seq    int
	status string
	stamps [3]fileStamp // the request, its response (the usual name, n+1) and its delivery log
	raw    []byte       // json.MarshalIndent(x, indexElem, "  ")
}

// sessionIndex is one session folder's index.
type sessionIndex struct {
	dir string
	// bound (unix ns): the reading of the file system's clock taken before anything it holds was
	// stamped; what changed before it is trusted (settled).
	bound int64
	// folder is the folder's stamp when names were read: its names besides the hidden ones.
	folder  fileStamp
	names   []string
	entries map[int]*indexEntry
}

// indexable reports whether x can be kept in the index: its response is the usual file n+1 (a
// seed's request may name another, whose stamp the entry would not hold).
func indexable(x *Exchange, dir string) bool {
	return x.ResponsePath == filepath.Join(dir, messages.SeqFileName(x.Seq+1, messages.KindResponse))
}

// indexPath is where dir's index is kept: beside the session folders, not in them, so writing it
// changes no session folder's stamp.
func indexPath(dir string) string {
	return filepath.Join(filepath.Dir(dir), store.HistoryDir, filepath.Base(dir))
}

// readIndex reads dir's index; nil when it is missing, damaged, of another folder or version.
func readIndex(dir string) *sessionIndex {
	data, err := store.ReadFile(indexPath(dir))
	if err != nil {
		return nil
	}
	head, body, ok := bytes.Cut(data, []byte{'\n'})
	if !ok || !bytes.HasPrefix(head, []byte(indexMagic)) {
		return nil
	}
	sum, err := strconv.ParseUint(string(head[len(indexMagic):]), 16, 32)
	if err != nil || uint32(sum) != crc32.Checksum(body, castagnoli()) {
		return nil
	}
	idx := &sessionIndex{entries: map[int]*indexEntry{}}
	line, body, _ := bytes.Cut(body, []byte{'\n'})
	f := strings.SplitN(string(line), " ", 4)
	if len(f) != 4 {
		return nil
	}
	var err1, err2 error
	var ok1 bool
	idx.bound, err1 = strconv.ParseInt(f[0], 10, 64)
	idx.folder, ok1 = parseStamp(f[1])
	size, err2 := strconv.Atoi(f[2])
	if err1 != nil || err2 != nil || !ok1 || json.Unmarshal([]byte(f[3]), &idx.dir) != nil || idx.dir != dir {
		return nil // a folder moved or copied: every path its encodings hold is another's
	}
	if size < 0 || size+1 > len(body) || body[size] != '\n' {
		return nil
	}
	if size > 0 {
		idx.names = strings.Split(string(body[:size]), "\x00")
	}
	body = body[size+1:]
	for len(body) > 0 {
		line, rest, ok := bytes.Cut(body, []byte{'\n'})
		f := strings.Fields(string(line))
		if !ok || len(f) != 6 {
			return nil
		}
		e := &indexEntry{status: f[1]}
		var ok1, ok2, ok3 bool
		e.stamps[0], ok1 = parseStamp(f[2])
		e.stamps[1], ok2 = parseStamp(f[3])
		e.stamps[2], ok3 = parseStamp(f[4])
		n, err1 := strconv.Atoi(f[0])
		size, err2 := strconv.Atoi(f[5])
		if !ok1 || !ok2 || !ok3 || err1 != nil || err2 != nil || size < 0 || size+1 > len(rest) || rest[size] != '\n' {
			return nil
		}
		e.seq, e.raw, body = n, rest[:size:size], rest[size+1:]
		idx.entries[n] = e
	}
	return idx
}

// encode is the index's file: the magic and checksum; its bound, the folder's stamp, the
// size of its names and the folder; the names, NUL-separated; then per entry a line
// "SEQ STATUS REQUEST RESPONSE LOG SIZE" and SIZE bytes of encoding.
func (idx *sessionIndex) encode(order []int) []byte {
	dir, _ := json.Marshal(idx.dir)
	names := strings.Join(idx.names, "\x00")
	size := len(names) + len(dir) + 64
	for _, n := range order {
		size += len(idx.entries[n].raw) + 160
	}
	// The head (magic and checksum) is written last, into room left for it.
	head := len(indexMagic) + 9
	b := make([]byte, head, head+size)
	b = strconv.AppendInt(b, idx.bound, 10)
	b = append(b, ' ')
	b = idx.folder.appendTo(b)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(len(names)), 10)
	b = append(b, ' ')
	b = append(b, dir...)
	b = append(b, '\n')
	b = append(b, names...)
	b = append(b, '\n')
	for _, n := range order {
		e := idx.entries[n]
		b = strconv.AppendInt(b, int64(e.seq), 10)
		b = append(b, ' ')
		b = append(b, e.status...)
		for _, st := range e.stamps {
			b = append(b, ' ')
			b = st.appendTo(b)
		}
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(len(e.raw)), 10)
		b = append(b, '\n')
		b = append(b, e.raw...)
		b = append(b, '\n')
	}
	sum := fmt.Appendf(nil, "%s%08x\n", indexMagic, crc32.Checksum(b[head:], castagnoli()))
	copy(b, sum)
	return b
}

// writeIndex replaces dir's index. It is a hint: when it cannot be written, the next reader reads
// the files again, so the error is dropped.
func writeIndex(idx *sessionIndex, order []int) {
	d, err := store.Dir(filepath.Dir(idx.dir), store.HistoryDir, true)
	if err != nil {
		return
	}
	_ = store.WriteAtomicNoSync(filepath.Join(d, filepath.Base(idx.dir)), idx.encode(order))
}

// pruneIndex removes the index of each session folder that is gone (deleted by hand: wcomm
// deletes none), so the index folder does not grow with folders long gone.
func pruneIndex(root string, dirs []string) {
	d := filepath.Join(root, store.HistoryDir)
	names, err := readNames(d) // not the hidden temp files of a writer at work
	if err != nil {
		return
	}
	live := make(map[string]bool, len(dirs))
	for _, dir := range dirs {
		live[filepath.Base(dir)] = true
	}
	for _, n := range names {
		if !live[n] {
			_ = os.Remove(filepath.Join(d, n))
		}
	}
}

// readNames lists a folder's names besides the hidden ones.
func readNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	names, err := d.Readdirnames(-1)
	d.Close()
	if err != nil {
		return nil, err
	}
	out := names[:0]
	for _, n := range names {
		if !strings.HasPrefix(n, ".") {
			out = append(out, n)
		}
	}
	return out, nil
}

// exchange is the exchange an entry holds: decoded whole, or with encoded only what history's
// own use of it needs (Seq, Status, Dir, ResponsePath) besides the encoding.
func (i *indexEntry) exchange(dir string, encoded bool) (*Exchange, error) {
	if encoded {
		resp := appendSeqName(append(append(make([]byte, 0, len(dir)+20), dir...), '/'), i.seq+1, "-response.md")
		return &Exchange{Seq: i.seq, Status: i.status, Dir: dir, ResponsePath: string(resp), raw: i.raw}, nil
	}
	x := &Exchange{}
	if err := json.Unmarshal(i.raw, x); err != nil || x.Seq != i.seq {
		return nil, fmt.Errorf("index entry %d does not decode: %v", i.seq, err)
	}
	x.raw = i.raw
	return x, nil
}

// AppendJSON appends s encoded as json.MarshalIndent(s, prefix, indent) encodes it, byte for byte,
// taking each exchange's encoding from the index where it came from there: a history of
// thousands of exchanges is then copied, not encoded again.
func (s *SessionSummary) AppendJSON(dst []byte, prefix, indent string) ([]byte, error) {
	if indent != "  " || len(s.Exchanges) == 0 {
		data, err := json.MarshalIndent(s, prefix, indent)
		return append(dst, data...), err
	}
	head := *s
	head.Exchanges = nil
	data, err := json.MarshalIndent(&head, prefix, indent)
	if err != nil {
		return dst, err
	}
	// Every other field is encoded on lines of its own, and no JSON string holds a raw newline, so
	// the field is found by its line.
	field := []byte("\n" + prefix + indent + `"exchanges": `)
	at := bytes.Index(data, append(field, "null"...))
	if at < 0 {
		return dst, fmt.Errorf("encode session %s: no exchanges field", s.Name)
	}
	at += len(field)
	dst = append(dst, data[:at]...)
	dst = append(dst, '[')
	elem := prefix + indent + indent
	for i, x := range s.Exchanges {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, '\n')
		dst = append(dst, elem...)
		switch {
		case x.raw == nil:
			b, err := json.MarshalIndent(x, elem, indent)
			if err != nil {
				return dst, err
			}
			dst = append(dst, b...)
		case elem == indexElem:
			dst = append(dst, x.raw...)
		default:
			// Each line after the first starts with the index's prefix: it gets this one instead.
			for raw := x.raw; len(raw) > 0; {
				line, rest, more := bytes.Cut(raw, []byte("\n"+indexElem))
				dst = append(dst, line...)
				if more {
					dst = append(dst, '\n')
					dst = append(dst, elem...)
				}
				raw = rest
			}
		}
	}
	dst = append(dst, '\n')
	dst = append(dst, prefix+indent...)
	dst = append(dst, ']')
	return append(dst, data[at+len("null"):]...), nil
}
