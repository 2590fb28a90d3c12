package store

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Files are the protocol's state, so every write is whole or absent: a temp file in the same folder,
// written, synced and closed, then renamed (replace) or linked (claim, fails if the name exists).

const (
	DirMode  = 0o700
	FileMode = 0o600
	// MaxFile bounds what a reader loads: a response or request larger than this is damaged or hostile.
	MaxFile = 256 << 20
)

// ErrExists is returned by writeExclusive when the name is already taken.
var ErrExists = errors.New("file exists")

// OpenFile opens path as os.OpenFile does (O_CLOEXEC added), without offering the file to the
// runtime's poller: for a regular file os.OpenFile makes four fcntl calls and an epoll_ctl that
// the kernel refuses, five system calls beside the open, where os.NewFile makes one. flag must
// not hold O_NONBLOCK (NewFile would offer such a file to the poller). For the store's own files,
// which are regular files read and written whole.
func OpenFile(path string, flag int, perm fs.FileMode) (*os.File, error) {
	fd, err := openFD(path, flag, perm)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// writeTempSync writes the parts one after the other to a new hidden temp file in dir, with
// permissions perm and the fsync optional (see writeExclusiveNoSync), and returns its path. Parts
// let a large body be written from where it is, never copied into one buffer with its header.
func writeTempSync(dir string, durable bool, perm fs.FileMode, parts ...[]byte) (string, error) {
	f, err := writeTemp(dir, perm, parts...)
	if err != nil {
		return "", err
	}
	name := f.Name()
	if durable {
		if err := f.Sync(); err != nil {
			f.Close()
			os.Remove(name)
			return "", fmt.Errorf("sync %s: %w", name, err)
		}
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return "", fmt.Errorf("close %s: %w", name, err)
	}
	return name, nil
}

// joinParts is the largest record writeTemp joins into one write.
const joinParts = 64 << 10

// writeTemp writes the parts to a new hidden temp file in dir with permissions perm and returns
// it open, unsynced.
func writeTemp(dir string, perm fs.FileMode, parts ...[]byte) (*os.File, error) {
	return writeTempIn(nil, dir, perm, parts...)
}

// writeTempIn is writeTemp into f, an empty temp file in dir made ahead (a spare), or into a
// new one when f is nil.
func writeTempIn(f *os.File, dir string, perm fs.FileMode, parts ...[]byte) (*os.File, error) {
	if f == nil {
		t, err := createTemp(dir)
		if err != nil {
			return nil, fmt.Errorf("create temp file in %s: %w", dir, err)
		}
		f = os.NewFile(uintptr(t.fd), t.name)
	}
	name := f.Name()
	fail := func(err error) (*os.File, error) {
		f.Close()
		os.Remove(name)
		return nil, err
	}
	if perm.Perm() != FileMode {
		// Made 0600 under any umask only through its handle: the umask can only take bits away.
		if err := f.Chmod(perm); err != nil {
			return fail(fmt.Errorf("chmod %s: %w", name, err))
		}
	}
	if len(parts) > 1 {
		// A record of a few KB goes down in one write rather than one per part (a header, a
		// body, its newline); a large one is written as it is, not copied.
		n := 0
		for _, data := range parts {
			n += len(data)
		}
		if n <= joinParts {
			parts = [][]byte{bytes.Join(parts, nil)}
		}
	}
	for _, data := range parts {
		if _, err := f.Write(data); err != nil {
			return fail(fmt.Errorf("write %s: %w", name, err))
		}
	}
	return f, nil
}

// WriteAtomic replaces path with data atomically, as a file of the protocol's state (0600).
func WriteAtomic(path string, data []byte) error { return WriteFile(path, data, FileMode) }

// WriteAtomicNoSync is writeAtomic without the fsync, for the outbox's own state (see
// writeExclusiveNoSync).
func WriteAtomicNoSync(path string, data []byte) error {
	return writeAtomicSync(path, data, FileMode, false)
}

// WriteFile replaces path with data atomically, with permissions perm: a temp file in the same
// folder, written, synced and closed, then renamed over path. A reader sees the old file or the
// new one whole, never a part; a crash leaves at worst a hidden temp file.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return writeAtomicSync(path, data, perm, true)
}

func writeAtomicSync(path string, data []byte, perm fs.FileMode, durable bool) error {
	tmp, err := writeTempSync(filepath.Dir(path), durable, perm, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// WriteExclusive creates path with data atomically, failing with ErrExists when path is taken:
// one step both claims the name and publishes the whole content, by renameat2(RENAME_NOREPLACE)
// where the kernel has it, else by link(2) of the complete temp file.
func WriteExclusive(path string, data []byte) error { return writeExclusiveSync(path, data, true) }

// WriteExclusiveNoSync is writeExclusive without the fsync, for the outbox's own state (queued
// mail and outcomes). It is just as whole-or-absent for every other process, and it survives the
// writer being killed, which is what the outbox must survive. What an fsync adds is survival of a
// machine crash, and that also ends the tmux server the outbox belongs to (an outbox is named by
// the server's pid and start time), so it would guard nothing, at about 0.3 ms a file on ext4
// (measured). The protocol's record (requests, responses, questions) keeps its fsync.
func WriteExclusiveNoSync(path string, data []byte) error {
	return writeExclusiveSync(path, data, false)
}

func writeExclusiveSync(path string, data []byte, durable bool) error {
	return WriteExclusiveParts(path, durable, data)
}

// WriteExclusiveParts is writeExclusive of the parts written one after the other.
func WriteExclusiveParts(path string, durable bool, parts ...[]byte) error {
	tmp, err := writeTempSync(filepath.Dir(path), durable, FileMode, parts...)
	if err != nil {
		return err
	}
	return publishExclusive(tmp, path)
}

// publishExclusive gives the complete temp file tmp the name path, failing with ErrExists when
// path is taken.
func publishExclusive(tmp, path string) error {
	ok, err := renameNoReplace(tmp, path)
	if ok {
		if err != nil {
			os.Remove(tmp)
			if errors.Is(err, fs.ErrExist) {
				return fmt.Errorf("%s: %w", path, ErrExists)
			}
			return fmt.Errorf("rename into %s: %w", path, err)
		}
		return nil
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s: %w", path, ErrExists)
		}
		return fmt.Errorf("link into %s: %w", path, err)
	}
	return nil
}

// Syncs are the fsyncs of records published before they were synced (WriteExclusiveLater); the
// writer reports the state they record only once Wait has returned nil. A nil *Syncs syncs each
// record before it is published.
type Syncs struct {
	wg   sync.WaitGroup
	mu   sync.Mutex
	err  error
	hold bool       // Hold: the fsyncs of records published from now on begin at Wait
	held []syncFile // published, their fsync not begun yet
}

// syncFile is a published record whose fsync has not begun.
type syncFile struct {
	f    *os.File
	path string
}

// Hold has the fsyncs of the records published after it begin at Wait instead of at once. For a
// writer that lets another goroutine of its process go on first: in a process of one P (the
// resident) a goroutine in fsync holds the P for the call's length (0.3 ms and more here) until
// the runtime's monitor takes it back, and the goroutine let go first would wait for it. The
// records are whole for every reader from their publish either way, and Wait still returns only
// once they are synced.
func (s *Syncs) Hold() {
	s.mu.Lock()
	s.hold = true
	s.mu.Unlock()
}

// Wait begins the fsyncs held, waits for every fsync begun and returns the first that failed.
func (s *Syncs) Wait() error {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	held := s.held
	s.held, s.hold = nil, false
	s.mu.Unlock()
	for _, h := range held {
		s.begin(h)
	}
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// WriteExclusiveLater is WriteExclusiveParts of a record of the protocol (a request, a response)
// whose fsync runs while the writer goes on: the file is whole for every reader from the moment
// it has its name, as before, and durable across a machine crash once s.Wait returns. The fsync
// costs 1-8 ms on ext4 (measured on this kind of machine), which the delivery that follows a
// request's write, or the await that wakes on a response, no longer waits for; the command that
// wrote it still reports nothing before it. With s nil it is WriteExclusiveParts, synced first.
func WriteExclusiveLater(path string, s *Syncs, parts ...[]byte) error {
	if s == nil {
		return WriteExclusiveParts(path, true, parts...)
	}
	_, err := WriteExclusiveLaterStat(path, s, parts...)
	return err
}

// WriteExclusiveLaterStat is WriteExclusiveLater (s not nil) that also returns the file's
// modification time, from the file it wrote: a caller that reports the file need not read it back.
func WriteExclusiveLaterStat(path string, s *Syncs, parts ...[]byte) (time.Time, error) {
	dir := filepath.Dir(path)
	f, err := writeTempIn(takeSpare(dir), dir, FileMode, parts...)
	if err != nil {
		return time.Time{}, err
	}
	mtime := time.Now()
	if st, err := f.Stat(); err == nil {
		mtime = st.ModTime() // a rename leaves it as it is
	}
	if err := publishExclusive(f.Name(), path); err != nil {
		f.Close()
		return time.Time{}, err
	}
	s.mu.Lock()
	if s.hold {
		s.held = append(s.held, syncFile{f, path})
		s.mu.Unlock()
		return mtime, nil
	}
	s.mu.Unlock()
	s.begin(syncFile{f, path})
	return mtime, nil
}

// begin runs the fsync and the close of a published record in a goroutine of its own, which Wait
// waits for.
func (s *Syncs) begin(r syncFile) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		err := r.f.Sync()
		if cerr := r.f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("sync %s: %w", r.path, err)
			}
			s.mu.Unlock()
		}
	}()
}

// ReadFile reads a regular file without following a symlink at its last component, up to maxFile.
func ReadFile(path string) ([]byte, error) {
	data, _, err := readFileStat(path)
	return data, err
}

// readFileStat is readFile that also returns the file's modification time, from the same open
// file.
func readFileStat(path string) ([]byte, time.Time, error) {
	data, st, err := ReadFileStat(path)
	return data, mtimeOf(st), err
}

// mtimeOf is st's modification time; zero for a file that could not be opened (st unset).
func mtimeOf(st syscall.Stat_t) time.Time {
	if st.Ino == 0 && st.Mtim.Sec == 0 && st.Mtim.Nsec == 0 {
		return time.Time{}
	}
	return time.Unix(st.Mtim.Unix())
}

// ReadFileStat is ReadFile that also returns the open file's status, taken before it was read
// (a history's index stamps the files it read with it, instead of a stat of its own for each).
// It uses plain system calls: a history reads tens of thousands of small files, and an os.File
// adds a failed poller registration to each open, and a growing buffer extra reads.
func ReadFileStat(path string) ([]byte, syscall.Stat_t, error) {
	return ReadFileStatAt(unix.AT_FDCWD, path)
}

// ReadFileStatAt is ReadFileStat of path's last component in the folder open as dirfd (path's
// own folder, or AT_FDCWD for path itself): a history reads thousands of files of one folder,
// and a whole path is looked up again component by component each time.
func ReadFileStatAt(dirfd int, path string) ([]byte, syscall.Stat_t, error) {
	fd, st, _, err := openRegularAt(dirfd, path)
	if err != nil {
		return nil, st, err
	}
	defer syscall.Close(fd)
	// Sized from the stat, one byte more to see that the file grew meanwhile; read to the end.
	buf := make([]byte, 0, st.Size+1)
	for {
		if len(buf) == cap(buf) {
			if len(buf) > MaxFile {
				return nil, st, Kindf(ErrTooLarge, "%s grew past the %d bytes this tool reads", path, MaxFile)
			}
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := syscall.Read(fd, buf[len(buf):cap(buf)])
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return nil, st, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return buf, st, nil
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == st.Size {
			// Exactly the size the file had, and not the byte more a grown file would have
			// given: the whole file, without one more read to be told so.
			return buf, st, nil
		}
	}
}

// BigFile is the size from which a file is worth a garbage collection before it is read.
const BigFile = 1 << 20

// ReadFileText is readFileStat into a string, read in pieces into the string's own memory: a
// message of megabytes is held once, not as bytes and then again as their string.
func ReadFileText(path string) (string, time.Time, error) {
	text, st, err := ReadFileTextStat(path)
	return text, mtimeOf(st), err
}

// ReadFileTextStat is ReadFileText with the open file's status, as ReadFileStat.
func ReadFileTextStat(path string) (string, syscall.Stat_t, error) {
	return ReadFileTextStatAt(unix.AT_FDCWD, path)
}

// ReadFileTextStatAt is ReadFileTextStat in the folder open as dirfd, as ReadFileStatAt.
func ReadFileTextStatAt(dirfd int, path string) (string, syscall.Stat_t, error) {
	fd, st, _, err := openRegularAt(dirfd, path)
	if err != nil {
		return "", st, err
	}
	defer syscall.Close(fd)
	if st.Size >= BigFile {
		// Collect first: what earlier reads of this size left behind is then reused for this
		// one instead of adding to the resident memory (a message of 10 MB read three times
		// would otherwise hold 30 MB of pages).
		runtime.GC()
	}
	var b strings.Builder
	b.Grow(int(st.Size))
	// One byte more than the stat said, as readFileStat reads: a read short of it that brings the
	// text to the file's size is the whole file, without one more read to be told so.
	chunk := make([]byte, min(max(st.Size+1, 512), 64<<10))
	for {
		n, err := syscall.Read(fd, chunk)
		if err == syscall.EINTR || err == syscall.EAGAIN {
			continue
		}
		if err != nil {
			return "", st, &fs.PathError{Op: "read", Path: path, Err: err}
		}
		if n == 0 {
			return b.String(), st, nil
		}
		b.Write(chunk[:n])
		if b.Len() > MaxFile {
			return "", st, Kindf(ErrTooLarge, "%s grew past the %d bytes this tool reads", path, MaxFile)
		}
		if n < len(chunk) && int64(b.Len()) == st.Size {
			return b.String(), st, nil
		}
	}
}

// OpenRegular opens a regular file for reading without following a symlink at its last
// component, and checks its size against maxFile.
func OpenRegular(path string) (int, syscall.Stat_t, time.Time, error) {
	return openRegularAt(unix.AT_FDCWD, path)
}

// openRegularAt is OpenRegular of path's last component in the folder open as dirfd, path
// itself with AT_FDCWD. path names the file in errors.
func openRegularAt(dirfd int, path string) (int, syscall.Stat_t, time.Time, error) {
	var st syscall.Stat_t
	var fd int
	var err error
	name := path
	if dirfd != unix.AT_FDCWD {
		name = filepath.Base(path)
	}
	for {
		fd, err = syscall.Openat(dirfd, name, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return -1, st, time.Time{}, fmt.Errorf("%s is a symlink; refusing to follow it", path)
		}
		return -1, st, time.Time{}, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	if err := syscall.Fstat(fd, &st); err != nil {
		syscall.Close(fd)
		return -1, st, time.Time{}, &fs.PathError{Op: "stat", Path: path, Err: err}
	}
	mtime := time.Unix(st.Mtim.Unix())
	fail := func(err error) (int, syscall.Stat_t, time.Time, error) {
		syscall.Close(fd)
		return -1, st, mtime, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return fail(fmt.Errorf("%s is not a regular file", path))
	}
	if int(st.Uid) != ownUID {
		// As checkOwned: every party runs as the same user, so a file of another was planted.
		return fail(fmt.Errorf("%s is owned by uid %d, not by you (uid %d), so another user made it; wcomm does not use it: remove it: %w",
			path, st.Uid, os.Getuid(), ErrUnsafeRoot))
	}
	if st.Size > MaxFile {
		return fail(Kindf(ErrTooLarge, "%s is %d bytes, more than the %d this tool reads", path, st.Size, MaxFile))
	}
	return fd, st, mtime, nil
}

// ReadFirstLine reads at most the first 4 KiB of a file and returns its first line.
func ReadFirstLine(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	if !st.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file", path)
	}
	if err := CheckOwned(path, st); err != nil {
		return "", err
	}
	buf := make([]byte, 4096)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return "", err
	}
	line, _, _ := strings.Cut(string(buf[:n]), "\n")
	return line, nil
}

// AppendLine appends one line to a log file (O_APPEND keeps concurrent small writes whole).
func AppendLine(path string, line []byte) error {
	flag := os.O_WRONLY | os.O_APPEND | os.O_CREATE | syscall.O_NOFOLLOW
	if spares.on.Load() {
		// A log that is there is opened as before; one that is not yet is made from a spare.
		fd, err := openFD(path, flag&^os.O_CREATE, 0)
		if !errors.Is(err, fs.ErrNotExist) {
			return appendFD(fd, err, line)
		}
		if done, err := newLogFromSpare(path, line); done {
			return err
		}
	}
	fd, err := openFD(path, flag, FileMode)
	return appendFD(fd, err, line)
}

// appendFD writes line and its newline to fd, opened with err, and closes it.
func appendFD(fd int, err error, line []byte) error {
	if err != nil {
		return err
	}
	werr := writeFD(fd, append(line, '\n'))
	if err := syscall.Close(fd); werr == nil {
		werr = err
	}
	return werr
}

// newLogFromSpare makes the log at path, not there yet, with line as its first line, from a
// spare in its folder: written, then given its name only if that is still free. done is false
// when there was no spare, or another writer made the log first; line is then not written.
func newLogFromSpare(path string, line []byte) (done bool, err error) {
	f := takeSpare(filepath.Dir(path))
	if f == nil {
		return false, nil
	}
	name := f.Name()
	if _, err := f.Write(append(line, '\n')); err != nil {
		f.Close()
		os.Remove(name)
		return false, nil
	}
	if err := f.Close(); err != nil {
		os.Remove(name)
		return false, nil
	}
	if err := publishExclusive(name, path); err != nil {
		// Taken meanwhile (publishExclusive removed the spare), or the folder is gone: the
		// plain append says which.
		return false, nil
	}
	return true, nil
}

// WriteSwapNoSync replaces path's content with data, atomically for readers, without freeing an
// inode: data is written into spare, a file kept beside path for this, and the two trade names
// (renameat2 RENAME_EXCHANGE), so spare then holds the old content. On ext4 without a journal
// every file created afterwards skips each inode freed in the last minutes, reading its inode
// table block (recently_deleted in ext4's ialloc.c), so a record rewritten or removed for every
// message made every creation in the root slower, measured from about 30 µs to over 200 µs.
// The caller must be the only writer of path and spare (a lock). Not synced: for the outbox's
// own state (see WriteExclusiveNoSync). Where the swap is not there, spare is renamed over path.
func WriteSwapNoSync(path, spare string, data []byte) error {
	// A bare descriptor, not an os.File: the spare is written once and closed, and os.NewFile's
	// fcntl would be one more system call on every delivery, which writes this record.
	// No O_TRUNC: ext4 marks a file truncated to nothing, and its next close then writes the
	// file's new pages out at once (auto_da_alloc, for editors that rewrite in place), which
	// was about 1.5 % of an MCP server's CPU a message. The data is written over the old and
	// the rest cut off after, which truncates to nothing only when there is nothing to write.
	fd, err := openFD(spare, os.O_WRONLY|os.O_CREATE|syscall.O_NOFOLLOW, FileMode)
	if err != nil {
		return fmt.Errorf("open %s: %w", spare, err)
	}
	if err := writeFD(fd, data); err != nil {
		syscall.Close(fd)
		return fmt.Errorf("write %s: %w", spare, err)
	}
	if err := ftruncateFD(fd, int64(len(data))); err != nil {
		syscall.Close(fd)
		return fmt.Errorf("write %s: %w", spare, err)
	}
	if err := syscall.Close(fd); err != nil {
		return fmt.Errorf("write %s: %w", spare, err)
	}
	ok, err := renameExchange(spare, path)
	if ok && err == nil {
		return nil
	}
	if ok && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("swap %s into %s: %w", spare, path, err)
	}
	// The first record (path not there yet), or no swap on this system.
	if err := os.Rename(spare, path); err != nil {
		return fmt.Errorf("rename into %s: %w", path, err)
	}
	return nil
}

// EmptyBySwap empties the record at path, as Empty does, by trading names with spare when spare
// is an empty file: after WriteSwapNoSync of a record over an empty one it is, and the record is
// then kept as spare, where the next WriteSwapNoSync writes over it. Truncating a file to nothing
// frees its block, which the next record allocates again, about 1 % of an MCP server's CPU a
// message. Otherwise it is Empty. The caller must be the only writer of both (a lock).
func EmptyBySwap(path, spare string) error {
	var st syscall.Stat_t
	if err := syscall.Lstat(spare, &st); err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFREG && st.Size == 0 {
		if ok, err := renameExchange(spare, path); ok && err == nil {
			return nil
		}
	}
	return Empty(path)
}

// Empty truncates the file at path to nothing, keeping its inode (see WriteSwapNoSync): for a
// record whose absence an empty file says as well. A missing file is already empty.
func Empty(path string) error {
	// The open truncates; a bare descriptor spares os.NewFile's fcntl (see WriteSwapNoSync).
	fd, err := openFD(path, os.O_WRONLY|os.O_TRUNC|syscall.O_NOFOLLOW, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	return syscall.Close(fd)
}

// openFD is OpenFile's open without the os.File: for a file opened, written at most once and
// closed at once, where an os.File adds only its fcntl.
func openFD(path string, flag int, perm fs.FileMode) (int, error) {
	for {
		fd, err := syscall.Open(path, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
		if err == nil {
			return fd, nil
		}
		if err != syscall.EINTR {
			return -1, &fs.PathError{Op: "open", Path: path, Err: err}
		}
	}
}

// ftruncateFD cuts the file at fd to size.
func ftruncateFD(fd int, size int64) error {
	for {
		err := syscall.Ftruncate(fd, size)
		if err != syscall.EINTR {
			return err
		}
	}
}

// writeFD writes data whole to fd, as os.File.Write does: again after a short write or EINTR.
func writeFD(fd int, data []byte) error {
	for len(data) > 0 {
		n, err := syscall.Write(fd, data)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		data = data[n:]
	}
	return nil
}
