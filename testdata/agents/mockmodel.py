#!/usr/bin/env python3
"""mockmodel.py: one scripted model server on 127.0.0.1 for the real agent TUIs.

Python 3 standard library only. It speaks, with streaming SSE:
  - Anthropic Messages      POST /v1/messages[?beta=true]                  (Claude Code)
  - OpenAI Responses        POST /v1/responses                              (Codex CLI)
  - Gemini                  POST /v1beta/models/M:generateContent           (Gemini CLI router, checks)
                            POST /v1beta/models/M:streamGenerateContent?alt=sse
  - OpenAI Chat Completions POST /AGENT/v1/chat/completions                 (OpenCode, Copilot CLI, Qwen Code)
    The first path segment names the agent ("opencode", "copilot"): each is given a base URL
    of its own, so one server tells them apart.

Behaviour, the same for all three:
  - Every user prompt the agent submits is appended to --log as one JSON line
    {"agent": "claude|codex|gemini", "prompt": "...", "t": <unix seconds>}, flushed at once.
    This is the ground truth "the agent submitted this message once". Side requests
    (titles, routers, checks) and tool-result turns are not prompts and are not logged.
  - The answer is the text "ok", unless the prompt holds a line "RUN: <shell command>":
    then the answer is a shell tool call running that command, and after its result "ok".
  - A line "SLEEP: <seconds>" (at most 300) delays the answer, so the agent shows busy.
  - Codex only: a line "ESCALATE: <shell command>" makes the answer an exec_command that asks to
    run outside the sandbox (sandbox_permissions "require_escalated", with a justification), so
    a Codex with approval_policy "on-request" asks the person's approval first.
  - Anything else (HEAD, GET, unknown paths, bad bodies) gets a harmless answer and a
    line on stderr; a handler error never stops the server.
  - Bounded: it exits when its parent process dies or after --max-seconds.

Usage:
  mockmodel.py --port 0 --port-file F --log prompts.jsonl [--requests all.jsonl] [--max-seconds N]
"""

import argparse
import gzip
import http.server
import itertools
import json
import os
import re
import socketserver
import sys
import threading
import time
import zlib

RUN_RE = re.compile(r"^RUN: (.+?)\s*$", re.M)
ESCALATE_RE = re.compile(r"^ESCALATE: (.+?)\s*$", re.M)
# The justification Codex shows as its approval's reason.
ESCALATE_WHY = "scripted test needs to write"
SLEEP_RE = re.compile(r"^SLEEP: ([0-9]+(?:\.[0-9]+)?)\s*$", re.M)
MAX_SLEEP = 300.0
# Claude Code sends a pasted text as <pasted_content id=...>TEXT</pasted_content ...>.
# The wrapper is framed as "\n\n<pasted_content id=X>\nTEXT\n</pasted_content id=X>\n"; the
# framing newlines are Claude Code's, not the sender's, so they go with the wrapper.
PASTED_RE = re.compile(r"(?:\n\n)?<pasted_content\b[^>]*>\n?(.*?)\n?</pasted_content\b[^>]*>\n?", re.S)
# A message written to Claude Code's messaging socket reaches the model framed as coming from
# another Claude session: the sender's text between this opening line and a closing paragraph.
PEER_RE = re.compile(r"^Another Claude session sent a message:\n(.*?)\n\nThis came from another Claude session\b.*\Z", re.S)
SYSTEM_REMINDER_RE = re.compile(r"^\s*<system-reminder>.*</system-reminder>\s*$", re.S)

_ids = itertools.count(1)


def next_id(prefix):
    return "%s_%06d" % (prefix, next(_ids))


def eprint(*a):
    print("mockmodel:", *a, file=sys.stderr, flush=True)


class Recorder:
    """Appends JSON lines to files, one lock for all writers, flushed per line."""

    def __init__(self, prompt_path, requests_path):
        self.lock = threading.Lock()
        self.prompts = open(prompt_path, "a", encoding="utf-8") if prompt_path else None
        self.requests = open(requests_path, "a", encoding="utf-8") if requests_path else None
        for f in (self.prompts, self.requests):
            if f is not None:
                try:
                    os.chmod(f.name, 0o600)
                except OSError:
                    pass

    def _write(self, f, obj):
        if f is None:
            return
        with self.lock:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
            f.flush()

    def prompt(self, agent, text, via=None):
        obj = {"agent": agent, "prompt": text, "t": round(time.time(), 6)}
        if via:
            obj["via"] = via
        self._write(self.prompts, obj)

    def request(self, obj):
        self._write(self.requests, obj)


RECORDER = Recorder(None, None)


def run_command(prompt):
    """Returns the command of the last "RUN: ..." line in prompt, or None."""
    m = RUN_RE.findall(prompt or "")
    return m[-1] if m else None


def pause(prompt):
    """Sleeps as long as a "SLEEP: <seconds>" line asks (at most MAX_SLEEP), so a test sees
    the agent busy; the answer comes afterwards."""
    m = SLEEP_RE.findall(prompt or "")
    if m:
        time.sleep(min(float(m[-1]), MAX_SLEEP))


# ---------------------------------------------------------------- Anthropic (Claude Code)


def claude_user_text(content):
    """Returns (prompt text or None, is_tool_result) for one user message's content."""
    if isinstance(content, str):
        return PASTED_RE.sub(lambda m: m.group(1), content), False
    texts = []
    tool_result = False
    for block in content or []:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            tool_result = True
        elif block.get("type") == "text":
            t = block.get("text", "")
            # Claude Code adds context blocks wrapped in <system-reminder>; they are not
            # what the human (or wcomm) typed.
            if SYSTEM_REMINDER_RE.match(t):
                continue
            texts.append(t)
    if tool_result and not texts:
        return None, True
    # A prompt typed after a refused or interrupted tool call comes in the same user message
    # as that call's tool_result: it is still the person's prompt.
    if not texts:
        return None, False
    return PASTED_RE.sub(lambda m: m.group(1), texts[-1]), False


def claude_is_main(body):
    """The main conversation request carries the Bash tool; side requests do not."""
    for t in body.get("tools") or []:
        if isinstance(t, dict) and t.get("name") == "Bash":
            return True
    return False


def claude_reply(body):
    """Returns the list of content blocks to answer with, and the stop reason."""
    msgs = body.get("messages") or []
    user = None
    for m in reversed(msgs):
        if isinstance(m, dict) and m.get("role") == "user":
            user = m
            break
    main = claude_is_main(body)
    if user is None:
        return [{"type": "text", "text": "ok"}], "end_turn"
    prompt, tool_result = claude_user_text(user.get("content"))
    if tool_result or not main or prompt is None:
        return [{"type": "text", "text": "ok"}], "end_turn"
    via = None
    peer = PEER_RE.match(prompt)
    if peer:
        prompt, via = peer.group(1), "socket"
    RECORDER.prompt("claude", prompt, via)
    pause(prompt)
    cmd = run_command(prompt)
    if cmd:
        return [{"type": "tool_use", "id": next_id("toolu"), "name": "Bash",
                 "input": {"command": cmd, "description": "Run the requested command"}}], "tool_use"
    return [{"type": "text", "text": "ok"}], "end_turn"


def claude_sse(body, blocks, stop):
    model = body.get("model") or "mock-model"
    mid = next_id("msg")
    yield "message_start", {"type": "message_start", "message": {
        "id": mid, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                  "cache_read_input_tokens": 0}}}
    for i, b in enumerate(blocks):
        if b["type"] == "text":
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "text", "text": ""}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "text_delta", "text": b["text"]}}
        else:
            yield "content_block_start", {"type": "content_block_start", "index": i,
                                          "content_block": {"type": "tool_use", "id": b["id"],
                                                            "name": b["name"], "input": {}}}
            yield "content_block_delta", {"type": "content_block_delta", "index": i,
                                          "delta": {"type": "input_json_delta",
                                                    "partial_json": json.dumps(b["input"])}}
        yield "content_block_stop", {"type": "content_block_stop", "index": i}
    yield "message_delta", {"type": "message_delta",
                            "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": 1}}
    yield "message_stop", {"type": "message_stop"}


def claude_json(body, blocks, stop):
    return {"id": next_id("msg"), "type": "message", "role": "assistant",
            "model": body.get("model") or "mock-model", "content": blocks,
            "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}


# ---------------------------------------------------------------- OpenAI Responses (Codex)


def codex_reply(body):
    """Returns the output items to answer with."""
    items = body.get("input") or []
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    has_tools = bool(body.get("tools"))
    last = items[-1] if items else {}
    msg = lambda: [{"type": "message", "id": next_id("msg"), "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "ok", "annotations": []}]}]
    if not has_tools:
        # The title request: plain text, never a tool call, not a prompt.
        return msg()
    if not isinstance(last, dict) or last.get("type") in ("function_call_output", "custom_tool_call_output",
                                                           "local_shell_call_output"):
        return msg()
    user = None
    for it in reversed(items):
        if isinstance(it, dict) and it.get("role") == "user" and it.get("type", "message") == "message":
            user = it
            break
    if user is None or user is not last:
        return msg()
    content = user.get("content")
    if isinstance(content, str):
        prompt = content
    else:
        texts = [c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") in
                 ("input_text", "text")]
        if not texts:
            return msg()
        prompt = texts[-1]
    RECORDER.prompt("codex", prompt)
    pause(prompt)
    esc = ESCALATE_RE.findall(prompt)
    if esc:
        args = {"cmd": esc[-1], "sandbox_permissions": "require_escalated", "justification": ESCALATE_WHY}
        return [{"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                 "name": "exec_command", "arguments": json.dumps(args), "status": "completed"}]
    cmd = run_command(prompt)
    if cmd:
        return [{"type": "function_call", "id": next_id("fc"), "call_id": next_id("call"),
                 "name": "exec_command", "arguments": json.dumps({"cmd": cmd}), "status": "completed"}]
    return msg()


def codex_response(body, output, status):
    return {"id": body.get("_rid") or next_id("resp"), "object": "response", "created_at": int(time.time()),
            "status": status, "model": body.get("model") or "mock-model", "output": output,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 1, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 11}}


def codex_sse(body, output):
    body["_rid"] = next_id("resp")
    seq = itertools.count()
    ev = lambda typ, **kw: (typ, dict({"type": typ, "sequence_number": next(seq)}, **kw))
    yield ev("response.created", response=codex_response(body, [], "in_progress"))
    for i, item in enumerate(output):
        if item["type"] == "message":
            text = item["content"][0]["text"]
            start = dict(item, status="in_progress", content=[])
            yield ev("response.output_item.added", output_index=i, item=start)
            yield ev("response.content_part.added", item_id=item["id"], output_index=i, content_index=0,
                     part={"type": "output_text", "text": "", "annotations": []})
            yield ev("response.output_text.delta", item_id=item["id"], output_index=i, content_index=0,
                     delta=text)
            yield ev("response.output_text.done", item_id=item["id"], output_index=i, content_index=0,
                     text=text)
            yield ev("response.content_part.done", item_id=item["id"], output_index=i, content_index=0,
                     part=item["content"][0])
        else:
            yield ev("response.output_item.added", output_index=i, item=dict(item, arguments="",
                                                                              status="in_progress"))
            yield ev("response.function_call_arguments.delta", item_id=item["id"], output_index=i,
                     delta=item["arguments"])
            yield ev("response.function_call_arguments.done", item_id=item["id"], output_index=i,
                     arguments=item["arguments"])
        yield ev("response.output_item.done", output_index=i, item=item)
    yield ev("response.completed", response=codex_response(body, output, "completed"))


# ---------------------------------------------------------------- Gemini


def schema_value(schema, name=""):
    """Fills a JSON schema with a harmless value: the router gets a model, checks say 'user'."""
    if not isinstance(schema, dict):
        return "ok"
    typ = str(schema.get("type", "")).lower()
    enum = schema.get("enum")
    if enum:
        for pref in ("user", "flash"):
            for e in enum:
                if isinstance(e, str) and pref in e:
                    return e
        return enum[0]
    if typ == "object" or "properties" in schema:
        return {k: schema_value(v, k) for k, v in (schema.get("properties") or {}).items()}
    if typ == "array":
        return []
    if typ == "boolean":
        return False
    if typ in ("number", "integer"):
        return 0
    if name == "model_choice":
        return "flash"
    if name == "next_speaker":
        return "user"
    return "ok"


def gemini_parts(body, stream):
    """Returns the parts to answer with; logs the prompt for a streamed user turn."""
    contents = body.get("contents") or []
    last = contents[-1] if contents else {}
    parts = last.get("parts") or [] if isinstance(last, dict) else []
    gen = body.get("generationConfig") or {}
    schema = gen.get("responseJsonSchema") or gen.get("responseSchema")
    if not stream:
        # Router, next-speaker and loop checks: a JSON text when a schema asks for one.
        if schema:
            return [{"text": json.dumps(schema_value(schema))}]
        if gen.get("responseMimeType") == "application/json":
            return [{"text": "{}"}]
        return [{"text": "ok"}]
    if any(isinstance(p, dict) and "functionResponse" in p for p in parts) or last.get("role") != "user":
        return [{"text": "ok"}]
    texts = [p["text"] for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if not texts:
        return [{"text": "ok"}]
    prompt = texts[-1]
    RECORDER.prompt("gemini", prompt)
    pause(prompt)
    cmd = run_command(prompt)
    if cmd:
        return [{"functionCall": {"name": "run_shell_command", "args": {"command": cmd}}}]
    return [{"text": "ok"}]


def gemini_response(parts):
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 1, "totalTokenCount": 11},
            "modelVersion": "mock-model", "responseId": next_id("resp")}


# ---------------------------------------------------------------- OpenAI Chat Completions


CHAT_CONTEXT_RE = re.compile(r"\A(?:<(current_datetime|reminder|environment_context)>.*?</\1>\s*)+", re.S)


def chat_text(content):
    """The text of a chat message's content: a string, or the text parts of a list."""
    if isinstance(content, str):
        return content
    texts = [c.get("text", "") for c in content or [] if isinstance(c, dict) and c.get("type") == "text"]
    return texts[-1] if texts else None


def chat_shell_tool(body):
    """The name of the request's shell tool ("bash", "shell", ...), or None."""
    names = []
    for t in body.get("tools") or []:
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict) and fn.get("name"):
            names.append(fn["name"])
    for want in ("bash", "shell", "run_shell_command", "powershell"):
        if want in names:
            return want
    return None


def chat_reply(agent, body):
    """Returns (text, tool_call or None). Only a request with tools whose last message is the
    user's is a prompt: title and summary requests carry no tools, tool results end in a
    "tool" message."""
    msgs = body.get("messages") or []
    last = msgs[-1] if msgs else {}
    if not body.get("tools") or not isinstance(last, dict) or last.get("role") != "user":
        return "ok", None
    prompt = chat_text(last.get("content"))
    if prompt is None:
        return "ok", None
    # Copilot CLI puts context of its own before the typed text: "<current_datetime>...</...>\n\n".
    prompt = CHAT_CONTEXT_RE.sub("", prompt)
    RECORDER.prompt(agent, prompt)
    pause(prompt)
    cmd = run_command(prompt)
    tool = chat_shell_tool(body)
    if cmd and tool:
        return "", {"id": next_id("call"), "type": "function",
                    "function": {"name": tool, "arguments": json.dumps({"command": cmd, "description": "Run the requested command"})}}
    return "ok", None


def chat_chunks(body, text, call):
    """The SSE chunks of a streamed chat completion."""
    cid, model, now = next_id("chatcmpl"), body.get("model") or "mock-model", int(time.time())
    def chunk(delta, finish=None):
        return {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
    yield chunk({"role": "assistant", "content": ""})
    if call:
        yield chunk({"tool_calls": [dict(call, index=0)]})
        yield chunk({}, "tool_calls")
    else:
        yield chunk({"content": text})
        yield chunk({}, "stop")
    usage = {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}
    yield {"id": cid, "object": "chat.completion.chunk", "created": now, "model": model, "choices": [], "usage": usage}


def chat_json(body, text, call):
    msg = {"role": "assistant", "content": text or None}
    if call:
        msg["tool_calls"] = [call]
    return {"id": next_id("chatcmpl"), "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model") or "mock-model",
            "choices": [{"index": 0, "message": msg, "finish_reason": "tool_calls" if call else "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}}


# ---------------------------------------------------------------- HTTP


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "mockmodel/1"

    def log_message(self, fmt, *args):
        pass  # requests are traced by --requests; stderr is kept for the unusual

    def _body(self):
        n = int(self.headers.get("Content-Length") or 0)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            raw = b""
            while True:
                size = int(self.rfile.readline().strip().split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                raw += self.rfile.read(size)
                self.rfile.readline()
        else:
            raw = self.rfile.read(n) if n > 0 else b""
        enc = self.headers.get("Content-Encoding", "").lower()
        if enc == "gzip":
            raw = gzip.decompress(raw)
        elif enc == "deflate":
            raw = zlib.decompress(raw)
        elif enc:
            raise ValueError("unsupported Content-Encoding %r" % enc)
        return raw

    def _send_json(self, code, obj):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    def _start_sse(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()

    def _chunk(self, s):
        data = s.encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def _end_sse(self):
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def do_HEAD(self):
        eprint("HEAD", self.path)
        self._send_json(200, {})

    def do_GET(self):
        path = self.path.split("?")[0]
        RECORDER.request({"t": round(time.time(), 6), "method": "GET", "path": self.path})
        eprint("GET", self.path)
        if path.rstrip("/").endswith("/models"):
            self._send_json(200, {"object": "list", "models": [],
                                  "data": [{"id": "mock-model", "object": "model", "created": 0, "owned_by": "mock"}]})
            return
        self._send_json(200 if path in ("/", "/health", "/healthz") else 404,
                        {"ok": True} if path in ("/", "/health", "/healthz") else
                        {"error": {"code": 404, "message": "not found", "status": "NOT_FOUND"}})

    def do_PUT(self):
        self.do_POST()

    def do_DELETE(self):
        eprint("DELETE", self.path)
        self._send_json(404, {"error": {"code": 404, "message": "not found"}})

    def do_POST(self):
        path = self.path.split("?")[0]
        try:
            raw = self._body()
            body = json.loads(raw) if raw.strip() else {}
        except Exception as e:  # a bad body is the client's problem; answer and go on
            eprint("POST", self.path, "unreadable body:", e)
            self._send_json(400, {"error": {"type": "invalid_request_error", "message": str(e)}})
            return
        RECORDER.request({"t": round(time.time(), 6), "method": "POST", "path": self.path,
                          "headers": {k.lower(): v for k, v in self.headers.items()
                                      if k.lower() in ("content-type", "user-agent", "accept",
                                                       "anthropic-beta", "content-encoding")},
                          "body": body})
        if not isinstance(body, dict):
            body = {}
        try:
            if path.endswith("/messages/count_tokens"):
                self._send_json(200, {"input_tokens": 10})
            elif path.endswith("/messages"):
                blocks, stop = claude_reply(body)
                if body.get("stream"):
                    self._start_sse()
                    for name, data in claude_sse(body, blocks, stop):
                        self._chunk("event: %s\ndata: %s\n\n" % (name, json.dumps(data)))
                    self._end_sse()
                else:
                    self._send_json(200, claude_json(body, blocks, stop))
            elif path.endswith("/chat/completions"):
                agent = path.strip("/").split("/")[0] or "chat"
                text, call = chat_reply(agent, body)
                if body.get("stream"):
                    self._start_sse()
                    for data in chat_chunks(body, text, call):
                        self._chunk("data: %s\n\n" % json.dumps(data))
                    self._chunk("data: [DONE]\n\n")
                    self._end_sse()
                else:
                    self._send_json(200, chat_json(body, text, call))
            elif path.endswith("/responses"):
                output = codex_reply(body)
                if body.get("stream", False):
                    self._start_sse()
                    for name, data in codex_sse(body, output):
                        self._chunk("event: %s\ndata: %s\n\n" % (name, json.dumps(data)))
                    self._end_sse()
                else:
                    self._send_json(200, codex_response(body, output, "completed"))
            elif path.endswith(":streamGenerateContent"):
                parts = gemini_parts(body, True)
                self._start_sse()
                self._chunk("data: %s\r\n\r\n" % json.dumps(gemini_response(parts)))
                self._end_sse()
            elif path.endswith(":generateContent"):
                self._send_json(200, gemini_response(gemini_parts(body, False)))
            elif path.endswith(":countTokens"):
                self._send_json(200, {"totalTokens": 10})
            elif path.endswith(":embedContent") or path.endswith(":batchEmbedContents"):
                self._send_json(200, {"embedding": {"values": [0.0]}, "embeddings": [{"values": [0.0]}]})
            else:
                eprint("POST unknown path", self.path)
                self._send_json(404, {"error": {"code": 404, "message": "unknown path %s" % path,
                                                "type": "not_found_error", "status": "NOT_FOUND"}})
        except (BrokenPipeError, ConnectionResetError):
            eprint("POST", self.path, "client went away")
        except Exception as e:
            eprint("POST", self.path, "handler error:", repr(e))
            try:
                self._send_json(500, {"error": {"type": "api_error", "message": repr(e)}})
            except Exception:
                pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def handle_error(self, request, client_address):
        eprint("connection error from", client_address, repr(sys.exc_info()[1]))


def watchdog(max_seconds, parent):
    """Ends the process when the parent dies (we get re-parented) or the time is up."""
    deadline = time.monotonic() + max_seconds
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            eprint("parent %d gone, exiting" % parent)
            os._exit(0)
        if time.monotonic() > deadline:
            eprint("--max-seconds reached, exiting")
            os._exit(0)


def main():
    ap = argparse.ArgumentParser(description="scripted model server for agent TUIs (loopback only)")
    ap.add_argument("--port", type=int, default=0, help="port on 127.0.0.1; 0 picks a free one")
    ap.add_argument("--port-file", help="write the port to this file (atomically) once listening")
    ap.add_argument("--log", help="append one JSON line per submitted user prompt here")
    ap.add_argument("--requests", help="append every request (path and JSON body) here, for debugging")
    ap.add_argument("--max-seconds", type=float, default=3600, help="exit after this many seconds")
    args = ap.parse_args()

    global RECORDER
    RECORDER = Recorder(args.log, args.requests)
    srv = Server(("127.0.0.1", args.port), Handler)
    port = srv.server_address[1]
    threading.Thread(target=watchdog, args=(args.max_seconds, os.getppid()), daemon=True).start()
    if args.port_file:
        tmp = args.port_file + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("%d\n" % port)
            f.flush()
            os.fsync(f.fileno())
        os.rename(tmp, args.port_file)
    print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
