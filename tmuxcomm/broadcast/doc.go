// Package broadcast is the room of sends to several panes at once. It owns the target list of a
// send (several targets, comma-separated, the settings' @groups, or every agent of the session),
// its resolution before anything is written (one unknown or ambiguous target refuses the whole
// send), the broadcast id and its record (ROOT/.broadcasts/ID.json, store.BroadcastsDir), the
// await of several exchanges at once, labelled by pane as each answer comes, and the grouping of
// a broadcast's exchanges for history. Each target still gets an ordinary exchange of its own,
// sent by the door (the small interface Sender names what is needed of it), so delivery, the
// mailbox, relays to other hosts and every record stay those of one send. It imports the
// exchange and fleet rooms, core, store, paneops and messages.
package broadcast
