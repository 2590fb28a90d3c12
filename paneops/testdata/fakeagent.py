#!/usr/bin/env python3
"""A stand-in agent TUI for the delivery tests: an input box drawn the way Claude Code draws it.

Usage: fakeagent.py LOG [--swallow N] [--never] [--busy SECONDS] [--nobox SECONDS] [--late-paste] [--newline-first]
                       [--dialog-on-paste replace|above|on-enter]

Puts its tty in raw mode, enables bracketed paste and redraws after every input:

    (history: one "> message" row per submitted message)
    ────────────
    ❯\u00a0<input>            (a multi-line paste shows as "[Pasted text #N +M lines]")
    ────────────

Keys: a bracketed paste or typed text goes into the input; Enter (CR) submits it, appending
{"submitted": TEXT} to LOG, and clears it, except that
  --swallow N  ignores the first N Enters (as a freshly started Claude Code does),
  --never      ignores every Enter (a stuck TUI),
  --busy S     shows "✻ Working… (esc to interrupt)" for S seconds after start,
  --nobox S    draws no input box for S seconds after start (still starting).
  --newline-first takes the first Enter after a paste as a newline (as Gemini CLI takes an Enter
               too close to its paste handling): the box grows a row, nothing is submitted.
  --late-paste holds up its first paste, drawing nothing, until an Enter has come after it, then
               reads both in one go and takes that Enter as part of the paste (an event loop held
               up, as Gemini CLI's is on a loaded machine): the paste shows, not submitted.
  --dialog-on-paste MODE  once its first paste has arrived, shows a permission dialog drawn as
               Claude Code's (a tool asking to run a command): in place of the input box (replace)
               or above it, the box still holding the paste (above); on-enter takes the first Enter
               after the paste for the agent's own and shows the dialog above the box then. Every byte read while it shows
               is logged ({"dialog_read": TEXT}); an Enter there approves it ({"approved": TEXT}),
               as the real dialog's does, Escape denies it; either closes it.
Every paste is logged too: {"pasted": TEXT}. Escape and Ctrl-C are logged as {"key": NAME}: the
tests check wcomm never sends them.
"""
import json
import os
import select
import sys
import time
import tty

START, END = b"\x1b[200~", b"\x1b[201~"


def main():
    args = sys.argv[1:]
    log = open(args[0], "a", encoding="utf-8")
    swallow, never, busy, nobox, late, newline = 0, False, 0.0, 0.0, False, False
    dialog_mode, dialog_up, dialog_done = None, False, False
    i = 1
    while i < len(args):
        if args[i] == "--swallow":
            swallow = int(args[i + 1]); i += 2
        elif args[i] == "--never":
            never = True; i += 1
        elif args[i] == "--busy":
            busy = float(args[i + 1]); i += 2
        elif args[i] == "--nobox":
            nobox = float(args[i + 1]); i += 2
        elif args[i] == "--late-paste":
            late = True; i += 1
        elif args[i] == "--dialog-on-paste":
            dialog_mode = args[i + 1]; i += 2
        elif args[i] == "--newline-first":
            newline = True; i += 1
        else:
            raise SystemExit("unknown argument " + args[i])
    started = time.monotonic()

    def emit(rec):
        log.write(json.dumps(rec) + "\n")
        log.flush()

    fd = sys.stdin.fileno()
    tty.setraw(fd)
    history, text, pastes = [], "", 0
    collapsed = None

    def draw():
        now = time.monotonic() - started
        out = ["\x1b[2J\x1b[H"]
        for h in history[-10:]:
            out.append("> " + h + "\r\n")
        if now < busy:
            out.append("\u273b Working\u2026 (esc to interrupt)\r\n")
        if dialog_up:
            out.append("Bash command\r\n\r\n  Clean the build\r\n  rm -rf build\r\n\r\n"
                       "Do you want to proceed?\r\n\u276f 1. Yes\r\n  2. No\r\n\r\nEsc to cancel\r\n")
        if dialog_up and dialog_mode == "replace":
            pass
        elif now >= nobox:
            shown = collapsed if collapsed else text.replace("\n", " ")
            out.append("\u2500" * 40 + "\r\n")
            out.append("\u276f\u00a0" + shown + "\r\n")
            out.append("\u2500" * 40 + "\r\n")
        else:
            out.append("starting...\r\n")
        os.write(sys.stdout.fileno(), "".join(out).encode())

    os.write(sys.stdout.fileno(), b"\x1b[?2004h")
    draw()
    buf = b""
    while True:
        timeout = None
        now = time.monotonic() - started
        for t in (busy, nobox):
            if now < t:
                timeout = t - now if timeout is None else min(timeout, t - now)
        ready, _, _ = select.select([fd], [], [], timeout)
        if not ready:
            draw()
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buf += chunk
        merge = False
        if late and START in buf:
            # Held up: nothing is read into the box until an Enter follows the paste's end.
            while buf.find(END) < 0 or buf.find(b"\r", buf.find(END) + len(END)) < 0:
                more = os.read(fd, 65536)
                if not more:
                    return
                buf += more
            late, merge = False, True
        pasted_now = False
        while buf:
            if dialog_up:
                emit({"dialog_read": buf.decode("utf-8", "replace")})
                if b"\r" in buf or b"\x1b" in buf:
                    if b"\r" in buf:
                        emit({"approved": "rm -rf build"})
                    dialog_up = False
                buf = b""
                break
            if buf.startswith(START):
                end = buf.find(END)
                if end < 0:
                    break
                p = buf[len(START):end].decode("utf-8", "replace").replace("\r", "\n")
                buf = buf[end + len(END):]
                emit({"pasted": p})
                if dialog_mode in ("replace", "above") and not dialog_done:
                    dialog_up, dialog_done = True, True
                pasted_now = merge
                text += p
                if "\n" in text:
                    pastes += 1
                    collapsed = "[Pasted text #%d +%d lines]" % (pastes, text.count("\n"))
                continue
            c = buf[:1]
            buf = buf[1:]
            if c == b"\r":
                if dialog_mode == "on-enter" and not dialog_done and text:
                    dialog_up, dialog_done = True, True
                    continue
                if pasted_now:
                    pasted_now = False  # read with the paste: taken as part of it
                    continue
                if never:
                    continue
                if newline and text:
                    newline = False
                    text += "\n"
                    pastes += 1
                    collapsed = "[Pasted text #%d +%d lines]" % (pastes, text.count("\n"))
                    continue
                if swallow > 0:
                    swallow -= 1
                    continue
                if text:
                    emit({"submitted": text})
                    history.append(text.split("\n")[0])
                text, collapsed = "", None
            elif c == b"\x1b":
                emit({"key": "Escape"})
            elif c == b"\x03":
                emit({"key": "C-c"})
            elif c == b"\x7f":
                text = text[:-1]
            else:
                text += c.decode("utf-8", "replace")
        draw()


if __name__ == "__main__":
    main()
