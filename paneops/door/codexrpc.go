package door

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"time"
)

// The wire of Codex's app-server: a WebSocket upgrade (GET /) over its Unix socket, then one
// JSON-RPC message per text frame, without the "jsonrpc" member (the server closes a connection
// that sends raw JSON lines instead). A client says initialize, then the notification initialized,
// and may then call methods. The server also sends notifications of its own at any time; a reply
// is the message with the call's id and no method.

// maxRPCMessage bounds one message read from the server: the replies read here (thread lists,
// one thread without its turns, a started turn) are a few kilobytes.
const maxRPCMessage = 4 << 20

// rpcConn is one connection to an app-server.
type rpcConn struct {
	ws     *wsConn
	nextID int
}

type rpcRequest struct {
	ID     *int   `json:"id,omitempty"`
	Method string `json:"method"`
	Params any    `json:"params"`
}

type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// rpcError is an error reply of the server.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("app-server error %d: %s", e.Code, e.Message) }

type initializeParams struct {
	ClientInfo   clientInfo   `json:"clientInfo"`
	Capabilities capabilities `json:"capabilities"`
}

type clientInfo struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

type capabilities struct {
	ExperimentalAPI bool `json:"experimentalApi"`
}

// initializeResult is what the server says of itself.
type initializeResult struct {
	UserAgent string `json:"userAgent"`
	CodexHome string `json:"codexHome"`
}

// clientName is the name this client gives the app-server. The daemon takes the first client's
// name as the originator of everything it does from then on, the TUI's own threads and model
// requests included (measured on 0.169.0: a wcomm that connected to a daemon its TUI had just
// started, before the TUI did, made the TUI's thread "by wcomm"). So wcomm says it is the TUI,
// whose daemon it is, and changes nothing whoever comes first.
const clientName = "codex-tui"

// dialAppServer connects to the app-server on the Unix socket sock and says initialize and
// initialized. Everything is bounded by ctx.
func dialAppServer(ctx context.Context, sock string) (*rpcConn, initializeResult, error) {
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, "unix", sock)
	if err != nil {
		return nil, initializeResult{}, fmt.Errorf("connect to %s: %w", sock, err)
	}
	deadline := time.Now().Add(writeTimeout)
	if dl, ok := ctx.Deadline(); ok && dl.Before(deadline) {
		deadline = dl
	}
	ws, err := wsHandshake(nc, deadline)
	if err != nil {
		nc.Close()
		return nil, initializeResult{}, fmt.Errorf("connect to %s: %w", sock, err)
	}
	ws.SetReadLimit(maxRPCMessage)
	c := &rpcConn{ws: ws}
	var ini initializeResult
	err = c.call(ctx, "initialize", initializeParams{
		ClientInfo:   clientInfo{Name: clientName, Version: "1"},
		Capabilities: capabilities{ExperimentalAPI: true},
	}, &ini)
	if err == nil {
		err = c.notify(ctx, "initialized", struct{}{})
	}
	if err != nil {
		ws.Close()
		return nil, initializeResult{}, err
	}
	return c, ini, nil
}

func (c *rpcConn) Close() error { return c.ws.Close() }

// send writes one message; a complete write returns nil.
func (c *rpcConn) send(ctx context.Context, req rpcRequest) error {
	data, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if dl, ok := ctx.Deadline(); ok {
		_ = c.ws.SetWriteDeadline(dl)
	}
	return c.ws.WriteText(data)
}

func (c *rpcConn) notify(ctx context.Context, method string, params any) error {
	return c.send(ctx, rpcRequest{Method: method, Params: params})
}

// call sends a request and decodes its reply's result into out. An error reply is an *rpcError.
func (c *rpcConn) call(ctx context.Context, method string, params any, out any) error {
	if err := c.send(ctx, c.request(method, params)); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return c.reply(ctx, method, out)
}

// request is the next request of the connection.
func (c *rpcConn) request(method string, params any) rpcRequest {
	c.nextID++
	id := c.nextID
	return rpcRequest{ID: &id, Method: method, Params: params}
}

// reply reads until the reply to the latest request arrives, skipping the server's notifications
// and requests (approvals go to clients that resumed the thread; this one never does).
func (c *rpcConn) reply(ctx context.Context, method string, out any) error {
	want := fmt.Sprint(c.nextID)
	if dl, ok := ctx.Deadline(); ok {
		_ = c.ws.SetReadDeadline(dl)
	} else {
		_ = c.ws.SetReadDeadline(time.Now().Add(writeTimeout))
	}
	for {
		typ, data, err := c.ws.ReadMessage()
		if err != nil {
			return fmt.Errorf("%s: no reply: %w", method, err)
		}
		if typ != wsText {
			continue
		}
		var m rpcMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return fmt.Errorf("%s: the app-server sent a message that is not JSON: %w", method, err)
		}
		if m.Method != "" || string(m.ID) != want {
			continue
		}
		if m.Error != nil {
			return fmt.Errorf("%s: %w", method, m.Error)
		}
		if out == nil {
			return nil
		}
		if len(m.Result) == 0 {
			return fmt.Errorf("%s: the reply has no result", method)
		}
		if err := json.Unmarshal(m.Result, out); err != nil {
			return fmt.Errorf("%s: unexpected reply: %w", method, err)
		}
		return nil
	}
}

// isRPCError reports whether err is the server's own error reply.
func isRPCError(err error) bool {
	var e *rpcError
	return errors.As(err, &e)
}
