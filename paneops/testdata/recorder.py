#!/usr/bin/env python3
"""Record what a pane's program receives, for the delivery tests.

Usage: recorder.py OUTFILE [IDLE]

Puts its tty in raw mode, enables bracketed paste (ESC[?2004h), prints "RECORDER READY" (once that
text is on the screen, tmux has seen the mode switch), then appends one JSON line to OUTFILE per
event:
  {"paste": TEXT, "enter": true}   a complete bracketed paste directly followed by Enter (CR)
  {"paste": TEXT, "enter": false}  a paste followed by something else, or by nothing for IDLE
                                   seconds (only when IDLE is given: a loaded machine can delay an
                                   Enter by a second, so by default a paste waits for what follows)
  {"raw": TEXT}                    any bytes outside a paste (a stray Enter, keys, an unbracketed paste)
Bytes that are not UTF-8 appear as backslash escapes.
"""
import json
import os
import select
import sys
import tty

START = b"\x1b[200~"
END = b"\x1b[201~"


def text(b):
    return b.decode("utf-8", errors="backslashreplace")


def main():
    out = open(sys.argv[1], "a", encoding="utf-8")
    idle = float(sys.argv[2]) if len(sys.argv) > 2 else None

    def emit(rec):
        out.write(json.dumps(rec) + "\n")
        out.flush()

    fd = sys.stdin.fileno()
    tty.setraw(fd)
    os.write(sys.stdout.fileno(), b"\x1b[?2004hRECORDER READY\r\n")
    buf = b""
    while True:
        # A complete paste with nothing after it waits idle seconds for its Enter.
        pending = idle is not None and buf.startswith(START) and buf.find(END, len(START)) >= 0
        ready, _, _ = select.select([fd], [], [], idle if pending else None)
        if not ready:
            end = buf.find(END, len(START))
            emit({"paste": text(buf[len(START):end]), "enter": False})
            buf = buf[end + len(END):]
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buf += chunk
        while buf:
            if buf.startswith(START):
                end = buf.find(END, len(START))
                if end < 0:
                    break  # the rest of the paste is still coming
                rest = buf[end + len(END):]
                if not rest:
                    break  # wait for the Enter (or idle)
                enter = rest.startswith(b"\r")
                emit({"paste": text(buf[len(START):end]), "enter": enter})
                buf = rest[1:] if enter else rest
                continue
            i = buf.find(START)
            if i < 0:
                # Keep a tail that may be the start of a paste marker split across reads.
                keep = 0
                for n in range(len(START) - 1, 0, -1):
                    if buf.endswith(START[:n]):
                        keep = n
                        break
                i = len(buf) - keep
                if i == 0:
                    break
            emit({"raw": text(buf[:i])})
            buf = buf[i:]


if __name__ == "__main__":
    main()
