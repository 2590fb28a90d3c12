// Package loops is the room that keeps agents from messaging each other forever. It owns three
// decisions a send makes before its request reaches the receiver's outbox: which chain the request
// is part of (Parent: a request sent by a pane while it handles another continues that one's
// chain, one level deeper; any other begins a chain of its own), what the settings' per-source
// policy says of its sender (accept, hold or refuse, settings.Loops.Inbound), and whether it is
// over a cap (Decide: a chain deeper than chain_depth, or more chained requests from one pane to
// another in the window than rate allows). It keeps no store of its own: the chain travels in the
// request's header (messages.RequestHeader) and the counts are read from the pair's session
// folder, whose request files are the truth. What a hold does (the held folder of the receiver's
// outbox, the one notice to the person, release) is the mailbox room's; the door calls both.
package loops
