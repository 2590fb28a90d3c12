package proc

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
)

// ProcStart returns when process pid started, in clock ticks after boot (field 22 of
// /proc/PID/stat, proc(5)). A pid is reused once its process ends, but never by a process that
// started at the same tick, so (pid, start) names one process for the life of the machine: the
// test that a process recorded earlier is still the one running. A process that has exited but
// is not reaped yet (a zombie: a daemon's, whose parent is init, may stay one for seconds) keeps
// its stat line; it is reported gone.
func ProcStart(pid int) (uint64, error) {
	if pid <= 0 {
		return 0, fmt.Errorf("process %d: not a pid", pid)
	}
	// readInto, not os.ReadFile: a send checks two of these, and os.File's bookkeeping (a stat,
	// flag calls, a try at the poller) is more system calls than the read.
	var buf [512]byte
	data, err := readInto(buf[:0], "/proc/"+strconv.Itoa(pid)+"/stat")
	if err != nil {
		return 0, &os.PathError{Op: "open", Path: "/proc/" + strconv.Itoa(pid) + "/stat", Err: err}
	}
	return parseStatStart(data)
}

// parseStatStart reads the start time from a /proc/PID/stat line. comm runs to the last ")"
// (it may hold spaces and parentheses); the start time is the 20th field after it.
func parseStatStart(data []byte) (uint64, error) {
	closing := bytes.LastIndexByte(data, ')')
	if closing < 0 {
		return 0, fmt.Errorf("malformed stat line %q", data)
	}
	f := bytes.Fields(data[closing+1:])
	if len(f) < 20 {
		return 0, fmt.Errorf("malformed stat line %q: too few fields", data)
	}
	if state := string(f[0]); state == "Z" || state == "X" {
		return 0, fmt.Errorf("process has exited (state %s): %w", state, os.ErrProcessDone)
	}
	n, err := strconv.ParseUint(string(f[19]), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("malformed stat line %q: start time: %w", data, err)
	}
	return n, nil
}
