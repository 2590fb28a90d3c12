package remote

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/wcomm/wcomm/messages"
	"github.com/wcomm/wcomm/paneops"
	"github.com/wcomm/wcomm/tmuxcomm"
	"github.com/wcomm/wcomm/tmuxcomm/store"
)

// maxRequestLine bounds one request line: a message of 256 MiB in base64, and its fields.
const maxRequestLine = 400 << 20

// maxPollWait bounds a poll's wait, so a caller that went away frees the process soon.
const maxPollWait = 30 * time.Second

// Serve answers one wire request read from in on out: the remote end of `wcomm __remote`. e is
// this host's engine, root its root as given (hello reports it checked); release names this binary for hello. The connection may break mid-way (the
// client killed, the network gone): the request is carried out whole all the same, so a relay
// repeated later finds its result.
func Serve(ctx context.Context, e *tmuxcomm.Engine, root string, in io.Reader, out io.Writer, release string) error {
	signal.Ignore(syscall.SIGHUP, syscall.SIGPIPE)
	line, err := bufio.NewReaderSize(io.LimitReader(in, maxRequestLine), 64<<10).ReadBytes('\n')
	if err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	reply := serve(ctx, e, root, line, release)
	reply.Version = Version()
	b, err := messages.FormatWire(reply)
	if err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// The classes a reply carries, as the caller's exit codes.
const (
	usage   = int(tmuxcomm.ClassUsage)
	failure = int(tmuxcomm.ClassFailure)
)

func fail(code int, format string, a ...any) *messages.WireReply {
	return &messages.WireReply{Error: fmt.Sprintf(format, a...), Code: code}
}

// failErr is the reply of an engine error, with its class's exit code (tmuxcomm.ClassOf), which
// the caller's ReplyError maps back.
func failErr(err error) *messages.WireReply {
	return &messages.WireReply{Error: err.Error(), Code: tmuxcomm.ClassOf(err).ExitCode()}
}

func serve(ctx context.Context, e *tmuxcomm.Engine, root string, line []byte, release string) *messages.WireReply {
	req, err := messages.ParseWireRequest(line)
	if err != nil {
		return fail(usage, "%v", err)
	}
	if req.Version != Version() {
		return fail(failure, "this wcomm speaks wire version %d, the caller version %d: install the same wcomm release on both hosts", Version(), req.Version)
	}
	switch req.Op {
	case messages.WireHello:
		root, err := store.EnsureRoot(root, false)
		r := &messages.WireReply{OK: true, Release: release}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			err = nil // the first relayed send creates it
		case err == nil:
			r.Root = root
		}
		if exe, xerr := os.Executable(); xerr == nil {
			r.Binary = exe
		}
		if err != nil {
			r.Error = err.Error()
		}
		return r
	case messages.WireSend:
		return serveSend(ctx, e, req)
	case messages.WirePoll:
		return servePoll(ctx, e, req)
	case messages.WirePanes:
		panes, err := e.Panes(ctx, tmuxcomm.PanesOptions{Scope: paneops.Scope{All: true}})
		if err != nil {
			return failErr(err)
		}
		r := &messages.WireReply{OK: true}
		for _, p := range panes {
			r.Panes = append(r.Panes, messages.WirePane{ID: p.ID, Target: p.Target(), Command: p.Command})
		}
		return r
	case messages.WireFind:
		f, err := e.Find(ctx, tmuxcomm.FindOptions{Agent: req.To, Scope: paneops.Scope{All: req.All}, First: req.First})
		if err != nil {
			return failErr(err)
		}
		p := f.Pane
		return &messages.WireReply{OK: true, Panes: []messages.WirePane{{ID: p.ID, Target: p.Target(), Command: p.Command, Agent: req.To}}}
	}
	return fail(usage, "unknown operation %q", messages.SanitizeField(req.Op))
}

func serveSend(ctx context.Context, e *tmuxcomm.Engine, req *messages.WireRequest) *messages.WireReply {
	x, repeated, err := e.RelaySend(ctx, tmuxcomm.RelayedSend{ID: req.ID, From: req.From, To: req.To, Capability: req.Capability,
		Body: req.Body, Agent: req.Agent, First: req.First, NoQueue: req.NoQueue})
	if err != nil && x == nil {
		return failErr(err)
	}
	r := &messages.WireReply{OK: err == nil, Exchange: &messages.WireExchange{ID: x.ID, Worker: x.Worker,
		RequestPath: x.RequestPath, ResponsePath: x.ResponsePath, State: x.State, Evidence: x.Evidence, Repeated: repeated}}
	if err != nil {
		r.Error, r.Code = err.Error(), failErr(err).Code
	}
	return r
}

// servePoll returns the responses of the ids that came back, waiting up to WaitMS for a first one.
func servePoll(ctx context.Context, e *tmuxcomm.Engine, req *messages.WireRequest) *messages.WireReply {
	wait := min(time.Duration(req.WaitMS)*time.Millisecond, maxPollWait)
	deadline := time.Now().Add(wait)
	for {
		r := &messages.WireReply{OK: true}
		size := 0
		for _, id := range req.IDs {
			if messages.ValidID(id) != nil {
				continue
			}
			body, ok, err := e.RelayedResponse(id)
			if err != nil || !ok {
				continue
			}
			// The caller reads at most maxResponses of bodies in one reply: the rest wait for
			// its next poll. One response alone is within it (the engine reads no larger file).
			if size += len(body); size > maxResponses && len(r.Responses) > 0 {
				break
			}
			r.Responses = append(r.Responses, messages.WireResponse{ID: id, Body: []byte(body)})
		}
		if len(r.Responses) > 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return r
		}
		// A response is a file the worker's notify writes: looking every 25 ms costs a few stats.
		time.Sleep(25 * time.Millisecond)
	}
}
