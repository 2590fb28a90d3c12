package store

import "errors"

// Sentinel errors of every room; the front door maps them to exit codes.
var (
	ErrTimeout   = errors.New("timed out")
	ErrNotFound  = errors.New("not found")
	ErrAmbiguous = errors.New("ambiguous")
	// ErrOrchestratorGone: the response was saved but the orchestrator's pane no longer exists.
	ErrOrchestratorGone = errors.New("orchestrator pane is gone")
	// ErrUndelivered: the request file was written but could not be delivered to the worker.
	ErrUndelivered = errors.New("request not delivered")
	// ErrAnswered: the exchange already has a response; the first one stands.
	ErrAnswered = errors.New("already answered")
	// ErrNotRecorded marks a step that happened but could not be written to its log (a full
	// disk): the command fails rather than report a state the files do not hold.
	ErrNotRecorded = errors.New("not recorded")
	// ErrDamaged marks a protocol file that exists but does not parse.
	ErrDamaged = errors.New("damaged file")
)
