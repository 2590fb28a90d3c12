// Package callstack grows a goroutine's stack at once to what a call of wcomm's engine needs. A
// goroutine starts with a few KiB, and a send, an await or a notify (the engine, its files and
// tmux calls, the result's encoding) run in a fresh one (the MCP SDK's per call, the resident's
// per handed command) grew it by doubling, copying and adjusting every frame it held each time:
// about 4 % of those processes' CPU, measured.
package callstack

// half is half the stack such a call grows to (past 64 KiB, measured): a frame of it makes the
// stack 128 KiB in one step, while the goroutine holds little to copy.
const half = 64 << 10

// depth keeps Grow's frame from being optimised away.
var depth int

// Grow grows the calling goroutine's stack to hold a call of the engine.
//
//go:noinline
func Grow() byte {
	var frame [half]byte
	frame[depth] = 1
	return frame[len(frame)-1-depth]
}
