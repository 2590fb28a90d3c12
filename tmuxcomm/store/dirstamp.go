package store

import (
	"sync"
	"syscall"
	"time"
)

// A folder's own stat tells whether its entries changed: making, removing or renaming an entry
// sets the folder's modification (and change) time to the clock's now, and a folder made again
// at the same path has another inode. The clock those times come from is coarse (a kernel tick,
// or a whole second on some filesystems), so a change in the same tick as the last one can leave
// them as they were: a listing is only remembered by a stamp whose last change is settleDir
// older than the stat taken before the listing, after which any change gives another stamp.
const settleDir = 2 * time.Second

// DirStamp identifies a folder's entries as they were (see above).
type DirStamp struct {
	Dev, Ino     uint64
	Mtime, Ctime int64
}

// StampDir stats dir. settled: its last change is settleDir older than now, so a listing made
// after this stat may be remembered under the stamp.
func StampDir(dir string) (s DirStamp, settled bool, err error) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return DirStamp{}, false, err
	}
	s = DirStamp{Dev: uint64(st.Dev), Ino: st.Ino, Mtime: st.Mtim.Nano(), Ctime: st.Ctim.Nano()}
	// The change time also moves when the folder's mode or owner does; its entries move both.
	return s, time.Now().UnixNano()-s.Mtime > int64(settleDir), nil
}

// DirMemo remembers, per folder, what was made of a listing of it under the stamp taken just
// before: a caller that lists the same folder at each call (an outbox's queue, the root's
// session folders) stats it instead while it has not changed. A file written whole and renamed
// into place (WriteAtomic) is stamped as well: each version is another inode.
type DirMemo[T any] struct {
	m sync.Map // key -> memoEntry[T]
}

type memoEntry[T any] struct {
	stamp DirStamp
	val   T
}

// Get returns what list makes of dir, from the memo while dir's stamp is the one it was made
// under. key names what was made (dir, or dir and what it was made for). list is called after
// the stat, so a change during it gives another stamp next time. An error of the stat or of list
// is returned as it is, and nothing is remembered.
func (d *DirMemo[T]) Get(dir, key string, list func() (T, error)) (T, error) {
	s, settled, err := StampDir(dir)
	if err != nil {
		var zero T
		return zero, err
	}
	if v, ok := d.m.Load(key); ok {
		if e := v.(memoEntry[T]); e.stamp == s {
			return e.val, nil
		}
	}
	val, err := list()
	if err != nil {
		return val, err
	}
	if settled {
		d.m.Store(key, memoEntry[T]{stamp: s, val: val})
	} else {
		d.m.Delete(key)
	}
	return val, nil
}
