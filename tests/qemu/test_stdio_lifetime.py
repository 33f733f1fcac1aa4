#!/usr/bin/env python3
"""`qemu/run.sh --stdio` is what an MCP client launches as a stdio server, and clients end it in
different ways: close stdin and wait, send SIGTERM, close stdin then SIGTERM a moment later (the
MCP stdio shutdown sequence; clients send it as soon as 0.3 s after closing), or SIGKILL. In each
case the QEMU it started, and its input feeder, must be gone within 2 s: nothing may outlive the
command a client launched. Each scenario first proves the line works (an initialize answered)."""
import json
import os
import signal
import subprocess
import time

from harness import ROOT, TestFailure, check, main

GRACE_S = 2.0


def children(pid):
    """PIDs whose parent is pid (from /proc)."""
    out = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(entry))
    return out


def command_of(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().split(b"\0")[0].decode(errors="replace")
    except OSError:
        return ""


def alive(pid):
    """True while pid exists and is not a zombie (a reaped or exited process is gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def launch(args, line):
    cmd = [os.path.join(ROOT, "qemu", "run.sh"), "--kernel", args.kernel, "--cpu", args.cpu, "--gic", str(args.gic),
           "--stdio", "--line", line]
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    # The line answers: the whole chain (wrapper, feeder, QEMU, kernel) is up.
    proc.stdin.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",'
                     b'"capabilities":{},"clientInfo":{"name":"lifetime","version":"1"}}}\n')
    proc.stdin.flush()
    reply = proc.stdout.readline()
    check(reply, "no answer to initialize")
    r = json.loads(reply)
    check(r.get("id") == 1 and "result" in r, f"initialize: {r}")
    # What the wrapper started: QEMU (through setpriv, which execs it) and the input feeder.
    started = [p for p in children(proc.pid) if command_of(p)]
    qemu = [p for p in started if "qemu-system-aarch64" in command_of(p)]
    check(len(qemu) == 1, f"expected one QEMU child of the wrapper, found {[(p, command_of(p)) for p in started]}")
    return proc, started


def end(proc, how):
    if how == "eof":
        proc.stdin.close()
    elif how == "sigterm":
        proc.send_signal(signal.SIGTERM)
    elif how == "eof+sigterm":
        proc.stdin.close()
        time.sleep(0.3)
        proc.send_signal(signal.SIGTERM)
    elif how == "sigkill":
        proc.send_signal(signal.SIGKILL)


def scenario(args, line, how):
    proc, started = launch(args, line)
    try:
        t0 = time.monotonic()
        end(proc, how)
        while time.monotonic() - t0 < GRACE_S and any(alive(p) for p in started):
            time.sleep(0.05)
        left = [(p, command_of(p)) for p in started if alive(p)]
        check(not left, f"{line} line, {how}: still running {GRACE_S} s later: {left}")
        gone = time.monotonic() - t0
        try:
            status = proc.wait(timeout=GRACE_S)
        except subprocess.TimeoutExpired:
            raise TestFailure(f"{line} line, {how}: the launched command itself did not end")
        print(f"{line:6} {how:12} everything gone after {gone:.2f} s (command status {status})")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in started:  # never leave anything behind, even when the check failed
            if alive(p):
                os.kill(p, signal.SIGKILL)


def test(args):
    for how in ("eof", "sigterm", "eof+sigterm", "sigkill"):
        scenario(args, "virtio", how)
    for how in ("eof+sigterm", "sigkill"):
        scenario(args, "uart", how)


if __name__ == "__main__":
    main(test)
