package store

import "path/filepath"

// The map of the root's hidden stores. Everything wcomm keeps under the root besides the session
// folders' exchange and question files is named here, with its mode and who writes it; no other
// file defines a hidden name. Every one is a hint, a claim or a queue: the session folders'
// files stay the truth, and a store that is lost or damaged costs a scan or a lookup, never a
// wrong answer. Folders are 0700 (dirMode), files 0600 (fileMode).
//
//	name                  where           kind                      written by
//	.ids/                 root            folder of empty files     send (newID): one O_EXCL claim per request id, pruned after pruneAge
//	.where/               root            folder of symlinks        send (RecordID): id -> "SESSION/NNN-request.md", read by show, await, notify
//	.panes/               root            folder of JSON cards      send, notify (recordPane): one card per pane, see panecard.go
//	.outbox/              root            folder per pane           the mailbox (openOutbox): SERVERKEY-pN/{queue,done,inflight.json,*.lock,deliverer.log}
//	.locks/               root            folder of lock files      paneops delivery (LockDir): one flock per pane, held from paste to Enter
//	.tmuxd/               root            folder per tmux server    the resident tmux client (wcomm __tmuxd): KEY.sock (0600), KEY.lock, KEY.d/ (its private files), tmuxd.log
//	.wcomm.lock           root            lock file                 openSession: serializes the creation of session folders
//	.wcomm-seq            session folder  symlink                   send (writeSeqHint): the newest request number claimed there
//	.wcomm-session.json   session folder  JSON file                 openSession (SessionMeta): the tmux server the pair lives on
const (
	// IDsDir holds one empty claim file per request id. An id is its second plus 16 random bits
	// (the seed's format), so busy senders collide now and then (a stress run saw 1 in 1,600); a
	// claim made with O_EXCL makes every id unique under the root. Only ids of the same second
	// can collide, so old claims are pruned now and then.
	IDsDir = ".ids"
	// WhereDir holds, per request id, where the request is (RecordID), so that show, await and
	// notify by id read one link instead of the request headers of other sessions. It grows with
	// the requests themselves, and only hints: the files stay the truth.
	WhereDir = ".where"
	// cardDir holds the pane cards (panecard.go).
	CardsDir = ".panes"
	// outboxFolder holds one outbox folder per pane (mailbox_outbox.go).
	OutboxDir = ".outbox"
	// ResidentDir holds, per tmux server, the socket, lock and private folder of the resident
	// tmux client (paneops.ResidentServer), and its log.
	ResidentDir = ".tmuxd"
	// lockDir holds the per-pane delivery locks that paneops takes.
	LocksDir = ".locks"
	// RootLockName serializes the creation of session folders across processes.
	RootLockName = ".wcomm.lock"
	// SeqHintName is the hint link in a session folder naming the newest request claimed there
	// (seqhint.go).
	SeqHintName = ".wcomm-seq"
	// MetaName is the hidden file in a session folder that names the tmux server the pair lives
	// on. Pane ids restart at %0 when a server restarts, so a folder is reused only by the same
	// server: an old "o0-w1" folder must never be taken for a new pane %1. Hidden, and not *.md,
	// so the seed's file counting and a person's ls see only the exchange files.
	MetaName = ".wcomm-session.json"
)

// LockDir is the folder of the per-pane delivery locks under root (paneops.Delivery.LockDir).
func LockDir(root string) string { return filepath.Join(root, LocksDir) }
