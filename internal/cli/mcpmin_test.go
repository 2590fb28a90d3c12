package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
)

// mcpMin is a minimal MCP client of a `wcomm mcp` it started: JSON-RPC lines on the server's
// stdin and stdout, and nothing else. The benchmark's round trips through the tools speak to
// the servers through it, the orchestrators' and the scripted workers' alike, as the outside
// harness's client does: what they measure is then the servers' work, not a client's (the
// official SDK's client, which the worker used before, spent its own CPU in the run's cgroup).
type mcpMin struct {
	cmd *exec.Cmd
	in  io.WriteCloser
	out *bufio.Reader
	id  int
}

// startPiped starts cmd with pipes to its stdin and from its stdout.
func startPiped(cmd *exec.Cmd) (io.WriteCloser, io.Reader, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	return in, out, nil
}

// startMCPMin starts cmd (a `wcomm mcp`) and initializes the session.
func startMCPMin(cmd *exec.Cmd, name string) (*mcpMin, error) {
	in, out, err := startPiped(cmd)
	if err != nil {
		return nil, err
	}
	c := &mcpMin{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20)}
	if _, err := c.call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1"}}); err != nil {
		c.close()
		return nil, err
	}
	if err := c.write(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

// close ends the server (its stdin closed) and waits for it.
func (c *mcpMin) close() {
	_ = c.in.Close()
	_ = c.cmd.Wait()
}

func (c *mcpMin) write(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = c.in.Write(append(data, '\n'))
	return err
}

// call sends one request and returns its result, skipping the server's notifications.
func (c *mcpMin) call(method string, params any) (json.RawMessage, error) {
	c.id++
	if err := c.write(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		line, err := c.out.ReadBytes('\n')
		if err != nil {
			return nil, fmt.Errorf("wcomm mcp: %w", err)
		}
		var msg struct {
			ID     *int            `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal(line, &msg) != nil || msg.ID == nil || *msg.ID != c.id {
			continue
		}
		if msg.Error != nil {
			return nil, fmt.Errorf("%s: %s", method, msg.Error)
		}
		return msg.Result, nil
	}
}

// mcpToolError is a tool call the tool refused (isError), with its structured content.
type mcpToolError struct {
	name    string
	content json.RawMessage
}

func (e *mcpToolError) Error() string { return fmt.Sprintf("%s: %s", e.name, e.content) }

// tool calls a tool and decodes its structured content into v (nil: not decoded); a tool
// error is an *mcpToolError.
func (c *mcpMin) tool(name string, args map[string]any, v any) error {
	raw, err := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if err != nil {
		return err
	}
	var res struct {
		IsError           bool            `json:"isError"`
		StructuredContent json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		return err
	}
	if res.IsError {
		return &mcpToolError{name: name, content: res.StructuredContent}
	}
	if v == nil {
		return nil
	}
	return json.Unmarshal(res.StructuredContent, v)
}
