package tmuxcomm

import "github.com/wcomm/wcomm/tmuxcomm/store"

// The sentinel errors of every room, named here for the faces, which map them to exit codes
// (ClassOf). They are defined once, in the store room, so that a room below the door can return
// them without importing it.
var (
	ErrTimeout          = store.ErrTimeout
	ErrNotFound         = store.ErrNotFound
	ErrAmbiguous        = store.ErrAmbiguous
	ErrOrchestratorGone = store.ErrOrchestratorGone
	ErrUndelivered      = store.ErrUndelivered
	ErrAnswered         = store.ErrAnswered
	ErrNotRecorded      = store.ErrNotRecorded
	ErrDamaged          = store.ErrDamaged
	ErrUnsafeRoot       = store.ErrUnsafeRoot
	ErrOutsideRoot      = store.ErrOutsideRoot
	ErrExists           = store.ErrExists
	ErrTooLarge         = store.ErrTooLarge
)

// DefaultRoot is the root of the session folders when none is given.
const DefaultRoot = store.DefaultRoot
