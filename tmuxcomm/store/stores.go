package store

import (
	"os"
	"path/filepath"
	"strconv"
)

// The map of the root's hidden stores. Everything wcomm keeps under the root besides the session
// folders' exchange and question files is named here, with its mode and who writes it; no other
// file defines a hidden name or a name inside a hidden store (the per-exchange and per-question
// lock names are messages' functions, listed here too). Every one is a hint, a claim, a lock, a
// log or a queue: the session folders' files stay the truth, and a store that is lost or damaged
// costs a scan, a lookup or a retry, never a wrong answer. Folders are 0700 (DirMode), files 0600
// (FileMode).
//
//	name                  where             kind                      written by
//	.ids/                 root              folder of empty files     a relayed send (ClaimID): one O_EXCL claim per request id, pruned after pruneAge; a plain send's id is claimed in .where (ClaimIDAt)
//	.where/               root              files, symlinks           send (ClaimIDAt): STAMP, one file a second of "SUFFIX SESSION/NNN-request.md" lines, claims and hints of that second's ids; an earlier version's link per id (RecordID); read by show, await, notify
//	.panes/               root              folder of JSON cards      send, notify (the fleet's pane cards): one card per pane
//	.outbox/              root              folder per pane           the mailbox: SERVERKEY-pN/, below
//	  queue/ID.json       outbox folder     JSON file per message     the mailbox (Post): a message waiting for its pane
//	  done/ID.json        outbox folder     JSON file per message     the mailbox: what became of a message, claimed O_EXCL
//	  inflight.json       outbox folder     JSON file                 the mailbox: the message being typed now
//	  held/ID.json        outbox folder     JSON file per message     the mailbox (Hold): a request over a loop cap, waiting for a person's release
//	  drain.lock          outbox folder     lock file                 the mailbox: one process at a time types from an outbox
//	  deliverer.lock      outbox folder     lock file                 the deliverer, for its whole life: one per pane
//	  deliverer.log       outbox folder     log                       the deliverer's diagnostics
//	.told/KEY.json        root              JSON file per chain/pair  the mailbox (Hold): the first held request of a chain or pair of panes, claimed O_EXCL, told once, pruned after a week
//	.locks/               root              folder of lock files      paneops delivery (LockDir): one flock per pane, held from paste to Enter
//	.history/             root              folder of index files     history (exchange/index.go), never send: per session folder, its names and each exchange's listing with its files' stamps
//	.wcomm.lock           root              lock file                 the exchange room (OpenSession) and the questions: serializes session folders' creation and answers
//	.relay/ID.lock        root              folder of lock files      the relay room (RelaySend): one lock per relayed id, so a relay repeated never delivers twice
//	.remote/              root              folder                    internal/remote, the local side of remote hosts:
//	  queue/ID.json       .remote           JSON file per send        a send waiting for its host
//	  pending/ID.json     .remote           JSON file per send        a relayed request whose response is still to be pulled
//	  done/ID.json        .remote           JSON file per send        a queued send that ended without reaching its host
//	  puller.lock         .remote           lock file                 the puller, for its whole life: one per root
//	  puller.log          .remote           log                       the puller's diagnostics
//	.broadcasts/ID.json   root              JSON file per broadcast   a send to several targets (the broadcast room): its members and their exchanges, read by await and history
//	.bridge/KEY/          root              folder per channel set    the bridge (internal/bridge/lockfile); KEY "" is .bridge itself:
//	  bridge.lock         bridge folder     lock file holding a pid   the running bridge: one per root and channel configuration
//	  state.json          bridge folder     JSON file                 the bridge: what was posted where
//	  bridge.log          bridge folder     log                       the diagnostics of a bridge an ask started
//	.wcomm-seq            session folder    symlink                   send (writeSeqHint): the newest request number claimed there
//	.wcomm-session.json   session folder    JSON file                 OpenSession (SessionMeta): the tmux server the pair lives on
//	NNN-request.md        session folder    flock (shared)            await, while it waits on exchange NNN (messages.AwaitLockName): no lock file of its own
//	.TASK.qN.wait.lock    session folder    lock file                 ask --wait, while it waits on question N (messages.WaitLockName)
//	.prompts/KEY.lock     root              lock file per tmux server the prompts room's sentry (in the bridge or the console), for its whole life: one per root and server
//	.lifecycle/           root              folder of JSON records    the lifecycle room (spawn, restart): SERVERKEY-pN.json, what wcomm started in each pane; names.lock
//	.tmuxd/               root              folder per tmux server    the resident tmux client (wcomm __tmuxd): KEY.sock (0600), KEY.lock, KEY.d/ (its private files), tmuxd.log
const (
	// IDsDir holds one empty claim file per request id. An id is its second plus 16 random bits
	// (the seed's format), so busy senders collide now and then (a stress run saw 1 in 1,600); a
	// claim made with O_EXCL makes every id unique under the root. Only ids of the same second
	// can collide, so old claims are pruned now and then.
	IDsDir = ".ids"
	// WhereDir holds, per request id, where the request is (ClaimIDAt, RecordID), so that show, await and
	// notify by id read one link instead of the request headers of other sessions. It grows with
	// the requests themselves, and only hints: the files stay the truth.
	WhereDir = ".where"
	// CardsDir holds the pane cards.
	CardsDir = ".panes"
	// OutboxDir holds one outbox folder per pane.
	OutboxDir = ".outbox"
	// ToldDir holds one notice claim per held chain or pair of panes, so the person is told once.
	ToldDir = ".told"
	// HistoryDir holds the history's index, one file per session folder, named as the folder
	// (exchange/index.go). Written only by a history that found an index missing or stale,
	// atomically; what changed since is read from the files again.
	HistoryDir = ".history"
	// ResidentDir holds, per tmux server, the socket, lock and private folder of the resident
	// tmux client (paneops/tmuxd), and its log.
	ResidentDir = ".tmuxd"
	// LifecycleDir holds one record per pane a spawn started (tmuxcomm/lifecycle): its command,
	// folder, worktree and conversation, for a restart and a stop; and names.lock, which makes
	// a name's check and its setting one step.
	LifecycleDir = ".lifecycle"
	// LocksDir holds the per-pane delivery locks that paneops takes.
	LocksDir = ".locks"
	// RootLockName serializes the creation of session folders across processes.
	RootLockName = ".wcomm.lock"
	// RelayDir holds one lock per relayed request id.
	RelayDir = ".relay"
	// RemoteDir holds the local side's records of sends to remote hosts.
	RemoteDir = ".remote"
	// PromptsDir holds the sentries' locks, one per tmux server (SERVERKEY.lock): a bridge and a
	// console running at once would otherwise each open a question for the same dialog.
	PromptsDir = ".prompts"
	// BroadcastsDir holds one record per broadcast (messages.Broadcast), claimed O_EXCL under
	// its id; each member's delivery log names the broadcast too, so a lost record costs a scan.
	BroadcastsDir = ".broadcasts"
	// BridgeDir holds one folder per channel configuration of the bridges.
	BridgeDir = ".bridge"
	// SeqHintName is the hint link in a session folder naming the newest request claimed there.
	SeqHintName = ".wcomm-seq"
	// MetaName is the hidden file in a session folder that names the tmux server the pair lives
	// on. Pane ids restart at %0 when a server restarts, so a folder is reused only by the same
	// server: an old "o0-w1" folder must never be taken for a new pane %1. Hidden, and not *.md,
	// so the seed's file counting and a person's ls see only the exchange files.
	MetaName = ".wcomm-session.json"
)

// LifecycleRecordName is the name in LifecycleDir of the record of pane number paneNum on the
// server whose key is server.
func LifecycleRecordName(server string, paneNum int) string {
	return server + "-p" + strconv.Itoa(paneNum) + ".json"
}

// Restartable reports whether a spawn started the pane numbered paneNum on server, so that a
// restart can bring it back (its record is there): mail for it waits while it is dead.
func Restartable(root, server string, paneNum int) bool {
	st, err := os.Lstat(filepath.Join(root, LifecycleDir, LifecycleRecordName(server, paneNum)))
	return err == nil && st.Mode().IsRegular()
}

// The names in an outbox folder (OutboxDir/SERVERKEY-pN).
const (
	// OutboxQueueDir holds the messages waiting for the pane, ID.json each.
	OutboxQueueDir = "queue"
	// OutboxDoneDir holds what became of each message that ended, ID.json each.
	OutboxDoneDir = "done"
	// OutboxHeldDir holds a pane's requests held over a loop cap (the loops room) until released.
	OutboxHeldDir = "held"
	// InflightName is the message being typed now: a deliverer killed mid-way leaves it.
	InflightName = "inflight.json"
	// InflightSpareName is the file InflightName is swapped with when it is written (a stale
	// record, never read): see store.WriteSwapNoSync.
	InflightSpareName = ".inflight.spare"
	// DrainLockName is held by the one process typing from the outbox.
	DrainLockName = "drain.lock"
	// DelivererLockName is held by the outbox's deliverer for its whole life.
	DelivererLockName = "deliverer.lock"
	// DelivererLogName is the deliverer's log.
	DelivererLogName = "deliverer.log"
)

// The names in RemoteDir.
const (
	// RemoteQueueDir holds the sends waiting for their host.
	RemoteQueueDir = "queue"
	// RemotePendingDir holds the relayed requests whose responses are still to be pulled.
	RemotePendingDir = "pending"
	// RemoteDoneDir holds the queued sends that ended without reaching their host.
	RemoteDoneDir = "done"
	// PullerLockName is held by the root's puller for its whole life.
	PullerLockName = "puller.lock"
	// PullerLogName is the puller's log.
	PullerLogName = "puller.log"
)

// The names in a bridge's folder (BridgeDir/KEY).
const (
	// BridgeLockName is held by the running bridge and holds its pid.
	BridgeLockName = "bridge.lock"
	// BridgeStateName is the bridge's state: what was posted where.
	BridgeStateName = "state.json"
	// BridgeLogName is the log of a bridge an ask started.
	BridgeLogName = "bridge.log"
)

// LockDir is the folder of the per-pane delivery locks under root (paneops.Delivery.LockDir).
func LockDir(root string) string { return filepath.Join(root, LocksDir) }
