#!/usr/bin/env python3
"""measure.py: measures how the real agent TUIs take pasted messages (python3 stdlib only).

Runs mockmodel.py and the agents (start-agent.sh) in a private tmux server and writes one
JSON line per trial to --out. Modes:

  measure.py start  --dir D --out F            time from start to ready, per agent
  measure.py delays --dir D --out F            paste, wait D ms, Enter in a separate call:
                                               submitted (per mockmodel's log) or not
  measure.py screens --dir D --shots FOLDER    capture-pane -p of each screen state

Everything is bounded: every wait has a deadline, and the tmux server, agents and model
server it started are ended on exit. MEASUREMENTS.md holds the numbers and how they were run.
"""

import argparse
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
AGENTS = ("claude", "codex", "gemini")

# ------------------------------------------------------------------ screen profiles


def rule(line):
    return line.startswith("\u2500\u2500\u2500\u2500")


def claude_box(lines):
    """Returns the lines between the last two rules (the input box), or None."""
    idx = [i for i, l in enumerate(lines) if rule(l)]
    if len(idx) < 2:
        return None
    return lines[idx[-2] + 1: idx[-1]]


def claude_ready(lines, esc_lines):
    box = claude_box(lines)
    # Empty box: one line "❯" + NO-BREAK SPACE; trailing ASCII spaces are trimmed by tmux.
    return box is not None and len(box) == 1 and box[0].rstrip(" ") == "\u276f\u00a0"


def claude_busy(lines):
    tail = lines[-3:]
    return any("esc to interrupt" in l for l in tail)


def codex_input(lines, esc_lines):
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].startswith("\u203a "):
            return i
    return None


def codex_ready(lines, esc_lines):
    i = codex_input(lines, esc_lines)
    if i is None or i < len(lines) - 6:
        return False
    # The placeholder is drawn dim (SGR 2); typed text is not.
    return i < len(esc_lines) and "\x1b[2m" in esc_lines[i]


def codex_busy(lines):
    return any("esc to interrupt" in l for l in lines[-12:])


GEMINI_PLACEHOLDER = "Type your message or @path/to/file"


def gemini_ready(lines, esc_lines):
    for l in lines[-8:]:
        s = l.strip()
        if (s.startswith("* ") or s.startswith("> ")) and s.endswith(GEMINI_PLACEHOLDER):
            return True
    return False


def gemini_busy(lines):
    return any("esc to cancel" in l for l in lines[-12:])


PROFILES = {
    "claude": (claude_ready, claude_busy),
    "codex": (codex_ready, codex_busy),
    "gemini": (gemini_ready, gemini_busy),
}

# ------------------------------------------------------------------ tmux and processes


class Tmux:
    def __init__(self, root):
        self.sock = os.path.join(root, "s")
        subprocess.run(["tmux", "-S", self.sock, "-f", "/dev/null", "new-session", "-d", "-s", "m",
                        "-x", "200", "-y", "50", "-n", "base"], check=True, timeout=10)
        # Keep dead panes out of the way: a paste into a dead pane crashes tmux 3.3a.
        self.run("set-option", "-g", "remain-on-exit", "off")

    def run(self, *args, input=None, check=True):
        r = subprocess.run(["tmux", "-S", self.sock] + list(args), input=input, capture_output=True,
                           timeout=20)
        if check and r.returncode != 0:
            raise RuntimeError("tmux %s: %s" % (" ".join(args[:3]), r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def new_window(self, cmd):
        return self.run("new-window", "-d", "-P", "-F", "#{pane_id} #{pane_pid}", cmd).split()

    def capture(self, pane, esc=False):
        args = ["capture-pane", "-p", "-t", pane] + (["-e"] if esc else [])
        return self.run(*args, check=False).split("\n")

    def paste(self, pane, text, name):
        # Content only via stdin; -p brackets the paste as the app asked for.
        self.run("load-buffer", "-b", name, "-", ";", "paste-buffer", "-d", "-p", "-b", name, "-t", pane,
                 input=text.encode())

    def kill(self):
        subprocess.run(["tmux", "-S", self.sock, "kill-server"], capture_output=True, timeout=10)


def descendants(pid):
    """All live descendants of pid, by /proc."""
    children = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            ppid = int(st.rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(d))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        for c in children.get(p, []):
            out.append(c)
            todo.append(c)
    return out


def alive(pid):
    return os.path.exists("/proc/%d" % pid)


def stop_window(tmux, pane, pid, grace=8.0):
    """Kills the pane, then waits for its processes (they outlive the pane by seconds) and
    SIGKILLs what is left, so one trial's agent never loads the next trial."""
    procs = [pid] + descendants(pid)
    tmux.run("kill-pane", "-t", pane, check=False)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(alive(p) for p in procs):
        time.sleep(0.1)
    for p in procs:
        if alive(p):
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Model:
    def __init__(self, root):
        self.log = os.path.join(root, "prompts.jsonl")
        pf = os.path.join(root, "port")
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "mockmodel.py"), "--port", "0",
                                      "--port-file", pf, "--log", self.log, "--max-seconds", "20000"],
                                     stdout=subprocess.DEVNULL, stderr=open(os.path.join(root, "model.err"), "w"))
        deadline = time.monotonic() + 10
        while not os.path.exists(pf):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("mockmodel.py did not start; see model.err")
            time.sleep(0.05)
        self.port = int(open(pf).read())
        open(self.log, "a").close()

    def prompts(self):
        # Only whole lines: a 100 KB line can be read while it is still being written.
        with open(self.log, encoding="utf-8") as f:
            return [json.loads(l) for l in f if l.endswith("\n")]

    def stop(self):
        self.proc.terminate()
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()


# ------------------------------------------------------------------ experiments


def wait_for(pred, timeout, step=0.05):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(step)
    return None


class Agent:
    def __init__(self, tmux, model, name, installed, root):
        self.tmux, self.model, self.name = tmux, model, name
        self.work = tempfile.mkdtemp(prefix="w-%s-" % name, dir=root)
        self.t0 = time.monotonic()
        self.pane, pid = tmux.new_window("%s %s %s %s %d" % (os.path.join(HERE, "start-agent.sh"), name,
                                                               installed, self.work, model.port))
        self.pid = int(pid)
        self.ready_fn, self.busy_fn = PROFILES[name]

    def screen(self):
        """Returns the plain and the escaped lines of the pane, trailing blank lines cut
        (Gemini draws inline, so a fresh screen ends in blank lines)."""
        lines, esc = self.tmux.capture(self.pane), self.tmux.capture(self.pane, esc=True)
        n = len(lines)
        while n and not lines[n - 1].strip():
            n -= 1
        return lines[:n], esc[:n]

    def ready(self):
        lines, esc = self.screen()
        return self.ready_fn(lines, esc)

    def idle(self):
        lines, esc = self.screen()
        return self.ready_fn(lines, esc) and not self.busy_fn(lines)

    def wait_ready(self, timeout=60):
        if wait_for(self.ready, timeout) is None:
            return None
        return time.monotonic() - self.t0

    def wait_idle(self, timeout=30):
        # Two idle looks 300 ms apart: a turn's last redraw can flicker the busy line.
        def twice():
            if not self.idle():
                return False
            time.sleep(0.3)
            return self.idle()
        return wait_for(twice, timeout) is not None

    def stop(self):
        stop_window(self.tmux, self.pane, self.pid)


def make_text(kind, token):
    if kind == "short":
        return "%s short message" % token
    if kind == "l40":
        return "\n".join(["%s line 1 of 40" % token] + ["line %d of 40" % i for i in range(2, 41)])
    if kind == "100k":
        lines = ["%s 100 KB message" % token]
        n = len(lines[0]) + 1
        i = 2
        while n < 100 * 1024:
            l = ("line %05d " % i) + "x" * 68
            lines.append(l)
            n += len(l) + 1
            i += 1
        return "\n".join(lines)
    raise ValueError(kind)


def submissions(model, token):
    return [p for p in model.prompts() if token in p["prompt"]]


def trial(tmux, model, agent, kind, delay_ms, label, retry=0.0):
    """Pastes one message, Enter after delay_ms in a separate call; returns a result dict."""
    token = "Z%s" % "".join(random.choice("abcdefghjkmnpqrstuvwxyz") for _ in range(10))
    text = make_text(kind, token)
    t_paste = time.time()
    if delay_ms < 0:
        # -1: paste and Enter chained in ONE tmux call (the bytes reach the app in one read).
        tmux.run("load-buffer", "-b", "b" + token, "-", ";", "paste-buffer", "-d", "-p", "-b", "b" + token,
                 "-t", agent.pane, ";", "send-keys", "-t", agent.pane, "Enter", input=text.encode())
    else:
        tmux.paste(agent.pane, text, "b" + token)
        time.sleep(delay_ms / 1000.0)
        tmux.run("send-keys", "-t", agent.pane, "Enter")
    got = wait_for(lambda: submissions(model, token), retry if retry else (15 if kind == "100k" else 8))
    retried = False
    if not got and retry:
        # What a careful sender does: look again, and press Enter once more.
        retried = True
        tmux.run("send-keys", "-t", agent.pane, "Enter")
        got = wait_for(lambda: submissions(model, token), 15 if kind == "100k" else 8)
    time.sleep(0.5)  # a late second submission would show here
    subs = submissions(model, token)
    res = {"agent": agent.name, "kind": kind, "delay_ms": delay_ms, "state": label,
           "submitted": len(subs), "whole": bool(subs) and subs[0]["prompt"].strip() == text.strip(),
           "latency_ms": round((subs[0]["t"] - t_paste) * 1000) if subs else None}
    if retry:
        res["retried"] = retried
    if subs:
        # Exact ends of what the agent sent: does a retried Enter leave a newline behind?
        res["ends"] = [subs[0]["prompt"][:12], subs[0]["prompt"][-12:]]
    if not got:
        lines, _ = agent.screen()
        res["screen_tail"] = [l.rstrip() for l in lines if l.strip()][-8:]
    elif not res["whole"]:
        p = subs[0]["prompt"]
        res["diff"] = {"got_len": len(p), "want_len": len(text), "got_head": p[:80], "got_tail": p[-80:]}
    return res


def cmd_start(args, tmux, model, out, root):
    for n in range(args.trials):
        for name in args.agents:
            a = Agent(tmux, model, name, args.dir, root)
            t = a.wait_ready(args.timeout)
            rec = {"mode": "start", "agent": name, "trial": n, "ready_s": round(t, 2) if t else None}
            if t is None:
                lines, _ = a.screen()
                rec["screen_tail"] = [l.rstrip() for l in lines if l.strip()][-8:]
            out(rec)
            a.stop()


def cmd_delays(args, tmux, model, out, root):
    for n in range(args.trials):
        for name in args.agents:
            for kind in args.kinds:
                for d in args.delays:
                    a = Agent(tmux, model, name, args.dir, root)
                    t = a.wait_ready(args.timeout)
                    if t is None:
                        out({"mode": "delays", "agent": name, "kind": kind, "delay_ms": d, "error": "not ready"})
                        a.stop()
                        continue
                    time.sleep(args.settle)
                    r = trial(tmux, model, a, kind, d, "fresh", args.retry)
                    r.update(mode="delays", trial=n, ready_s=round(t, 2), settle_s=args.settle)
                    out(r)
                    if args.warm and r["submitted"] and a.wait_idle(30):
                        r = trial(tmux, model, a, kind, d, "warm", args.retry)
                        r.update(mode="delays", trial=n)
                        out(r)
                    a.stop()


def cmd_screens(args, tmux, model, out, root):
    os.makedirs(args.shots, exist_ok=True)

    def shot(a, name):
        lines, esc = a.screen()
        with open(os.path.join(args.shots, "%s-%s.txt" % (a.name, name)), "w") as f:
            f.write("\n".join(lines))
        with open(os.path.join(args.shots, "%s-%s.esc" % (a.name, name)), "w") as f:
            f.write("\n".join(esc))

    for name in args.agents:
        a = Agent(tmux, model, name, args.dir, root)
        if a.wait_ready(args.timeout) is None:
            shot(a, "not-ready")
            a.stop()
            continue
        time.sleep(1.0)
        shot(a, "ready")
        for kind in ("short", "l40", "100k"):
            token = "S%s" % kind
            tmux.paste(a.pane, make_text(kind, token), "b" + token)
            time.sleep(1.5)
            shot(a, "pasted-" + kind)
            # One Ctrl-C clears a non-empty box in all three (a second one, on an empty
            # box, would exit Claude Code and Codex), then wait out Claude's hint.
            tmux.run("send-keys", "-t", a.pane, "C-c")
            wait_for(a.ready, 5)
            time.sleep(0.3)
            shot(a, "cleared-" + kind)
            time.sleep(3)
        busy = "busy please %s" % name
        tmux.paste(a.pane, busy + "\nSLEEP: 8", "bbusy")
        time.sleep(1.0)
        tmux.run("send-keys", "-t", a.pane, "Enter")
        if not wait_for(lambda: submissions(model, busy), 10):
            out({"mode": "screens", "agent": name, "note": "busy message not submitted by one Enter"})
            tmux.run("send-keys", "-t", a.pane, "Enter")
            wait_for(lambda: submissions(model, busy), 10)
        time.sleep(1.5)
        shot(a, "busy")
        a.wait_idle(20)
        time.sleep(0.5)
        shot(a, "answered")
        tmux.run("send-keys", "-t", a.pane, "-l", "half typed by a human")
        time.sleep(0.8)
        shot(a, "half-typed")
        a.stop()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("start", "delays", "screens"))
    ap.add_argument("--dir", required=True, help="folder install.sh installed into")
    ap.add_argument("--out", help="append JSON lines here (default stdout)")
    ap.add_argument("--shots", help="folder for screens mode")
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--kinds", default="short,l40,100k")
    ap.add_argument("--delays", default="0,50,100,200,300,500",
                    help="ms between paste and Enter; -1 chains both in one tmux call")
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--settle", type=float, default=1.0, help="seconds between ready and the paste")
    ap.add_argument("--warm", action="store_true", help="also send a second message to the same agent")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--retry", type=float, default=0,
                    help="if not submitted after this many seconds, press Enter once more (0: never)")
    args = ap.parse_args()
    args.agents = args.agents.split(",")
    args.kinds = args.kinds.split(",")
    args.delays = [int(x) for x in args.delays.split(",")]
    args.dir = os.path.abspath(args.dir)

    root = tempfile.mkdtemp(prefix="wcm-")
    os.chmod(root, 0o700)
    fout = open(args.out, "a") if args.out else sys.stdout

    def out(rec):
        fout.write(json.dumps(rec) + "\n")
        fout.flush()

    model = Model(root)
    tmux = Tmux(root)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(1))
    try:
        {"start": cmd_start, "delays": cmd_delays, "screens": cmd_screens}[args.mode](args, tmux, model, out, root)
    finally:
        # Agents first (their panes), then the server and the model.
        for line in tmux.run("list-panes", "-a", "-F", "#{pane_pid}", check=False).split():
            try:
                for p in descendants(int(line)):
                    os.kill(p, signal.SIGTERM)
            except (ValueError, ProcessLookupError):
                pass
        tmux.kill()
        model.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
