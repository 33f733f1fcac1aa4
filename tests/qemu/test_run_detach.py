#!/usr/bin/env python3
"""`./basalt run --detach` and `./basalt stop`: an appliance that outlives the script that started
it. A script runs `./basalt run --detach --port P --no-disk` and exits; the command returned only
once the endpoint answered, printed the client configuration, the PID, the console log and how to
stop it, and left no pipe of the script's open (the test's capture of its output ends). The
appliance then answers a tools/call every second for 30 s, in a session of its own; a second
--detach on the port is refused naming it; `./basalt stop --port P` ends it, removes its record,
and the port no longer answers; stop is idempotent and cleans a stale record. Refusals: --detach
with --stdio, and on a port something else already listens on. Without --detach, an appliance started in the background of a script still dies with
the script (nothing leaks)."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from harness import ROOT, check, main, mcp_post

BASALT = os.path.join(ROOT, "basalt")
BUILD = os.path.join(ROOT, "build")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def gone_within(pid, seconds):
    deadline = time.monotonic() + seconds
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True




def answers(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=3) as s:
            s.sendall(f"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n".encode())
            return s.recv(16).startswith(b"HTTP/1.1 ")
    except OSError:
        return False


def console_tail(port, lines=40):
    try:
        with open(os.path.join(BUILD, f"run-{port}.log"), errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError as e:
        return f"(no console log: {e})"


def script(scratch, name, body):
    path = os.path.join(scratch, name)
    with open(path, "w") as f:
        f.write(f"#!/bin/sh\ncd {ROOT}\n{body}\n")
    os.chmod(path, 0o755)
    return path


def refusals():
    r = subprocess.run([BASALT, "run", "--detach", "--stdio", "--no-disk"], input="", capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 2 and "--detach" in r.stderr and "--stdio" in r.stderr and r.stdout == "",
          f"--detach --stdio: exit {r.returncode}, stderr {r.stderr!r}")
    # A port something else listens on would answer for an appliance that never got it.
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = subprocess.run([BASALT, "run", "--detach", "--port", str(port), "--no-disk"], capture_output=True, text=True,
                           timeout=60)
    check(r.returncode == 2 and f"127.0.0.1:{port} already takes connections" in r.stderr and r.stdout == ""
          and not os.path.exists(os.path.join(BUILD, f"run-{port}.pid")), f"a taken port: exit {r.returncode}, {r.stderr!r}")


def detached(scratch):
    port = free_port()
    pid_file = os.path.join(BUILD, f"run-{port}.pid")
    pid = None
    try:
        # The script ends as soon as ./basalt returns; its output is captured through pipes, so
        # run() returning at all shows that the appliance kept none of them open.
        r = subprocess.run([script(scratch, "start.sh", f"./basalt run --detach --port {port} --no-disk")],
                           capture_output=True, text=True, timeout=120)
        check(r.returncode == 0, f"the script: exit {r.returncode}, stdout {r.stdout!r}, stderr {r.stderr!r}")
        lines = r.stdout.splitlines()
        url = f"http://127.0.0.1:{port}/mcp"
        check(len(lines) == 5 and lines[0] == f"MCP over Streamable HTTP: {url} (answering)", f"stdout: {lines}")
        config = json.loads(lines[2])["mcpServers"]["basalt"]
        check(config["url"] == url, f"config: {config}")
        key = config["headers"]["Authorization"].removeprefix("Bearer ")
        head = f"Running in the background as PID "
        check(lines[3].startswith(head) and lines[3].endswith(f"; console log: build/run-{port}.log"), f"line: {lines[3]}")
        pid = int(lines[3][len(head):].split(";")[0])
        check(lines[4] == f"Stop it with: ./basalt stop --port {port}", f"line: {lines[4]}")
        with open(pid_file) as f:
            check(int(f.read().split()[0]) == pid, "the pid file names the PID printed (and when it started)")
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            check(f.read().startswith(b"qemu-system-aarch64\0"), "the PID printed is QEMU's")
        check(os.getsid(pid) == pid, "the appliance runs in a session of its own")

        # The script is gone; the appliance answers a call every second for 30 s.
        status, answer, session = mcp_post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}, key)
        check(status == 200 and answer["result"]["serverInfo"]["name"] == "basalt", f"initialize: {answer}")
        mcp_post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, key, session)
        for i in range(30):
            time.sleep(1)
            try:
                status, answer, _ = mcp_post(url, {"jsonrpc": "2.0", "id": 2 + i, "method": "tools/call",
                                               "params": {"name": "kernel_info", "arguments": {}}}, key, session)
            except OSError as e:  # a reset or a timeout: what the appliance's console said tells why
                check(False, f"call {i + 1} of 30: {e!r}; run said: {r.stderr[-800:]!r}; the console's last "
                      f"lines:\n{console_tail(port)}")
            check(status == 200 and answer["result"]["isError"] is False, f"call {i + 1} of 30: {answer}")
        with open(os.path.join(BUILD, f"run-{port}.log"), errors="replace") as f:
            log = f.read()
        check(f"serving /mcp on port {port}" in log, f"the console log has the console: {log[-1500:]!r}")

        again = subprocess.run([BASALT, "run", "--detach", "--port", str(port), "--no-disk"], capture_output=True,
                               text=True, timeout=60)
        check(again.returncode == 2 and again.stderr == f"basalt: an appliance already runs in the background on port "
              f"{port} (PID {pid}): ./basalt stop --port {port}\n", f"a second --detach: {again.stderr!r}")

        stop = subprocess.run([BASALT, "stop", "--port", str(port)], capture_output=True, text=True, timeout=60)
        check(stop.returncode == 0 and stop.stderr == f"basalt: stopped the appliance on port {port} (PID {pid})\n",
              f"stop: exit {stop.returncode}, {stop.stderr!r}")
        check(not alive(pid), "QEMU is gone once stop returns")
        check(not os.path.exists(pid_file), "its record is removed")
        check(not answers(port), "the port no longer answers")
        stop = subprocess.run([BASALT, "stop", "--port", str(port)], capture_output=True, text=True, timeout=60)
        check(stop.returncode == 0 and stop.stderr == f"basalt: no appliance runs in the background on port {port}\n",
              f"a second stop: {stop.stderr!r}")
    finally:
        if pid and alive(pid):
            os.kill(pid, signal.SIGKILL)
        for leftover in (pid_file, os.path.join(BUILD, f"run-{port}.log")):  # the log is a user's, not a test's
            if os.path.exists(leftover):
                os.unlink(leftover)

    # A record whose process has ended (a reboot, a kill -9): cleaned, not obeyed.
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = os.path.join(BUILD, f"run-{free_port()}.pid")
    with open(stale, "w") as f:
        f.write(f"{dead.pid}\n")
    stop = subprocess.run([BASALT, "stop", "--all"], capture_output=True, text=True, timeout=60)
    check(stop.returncode == 0 and "no appliance runs in the background" in stop.stderr and not os.path.exists(stale),
          f"stale record: {stop.stderr!r}, still there: {os.path.exists(stale)}")


def tied_without_detach(scratch):
    """Without --detach the appliance dies with the script that put it in the background."""
    port = free_port()
    err = os.path.join(scratch, "run.err")
    body = (f"./basalt run --port {port} --no-disk </dev/null >/dev/null 2>{err} &\necho $!\n"
            f"while ! grep -q answering {err}; do sleep 0.1; done\n")
    r = subprocess.run(["timeout", "90", script(scratch, "tied.sh", body)], capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, f"the script: exit {r.returncode}, {r.stderr!r}")
    pid = int(r.stdout.split()[0])  # ./basalt execs run.sh, which execs QEMU
    try:
        check(gone_within(pid, 10), "an appliance run without --detach ends with its launcher")
    finally:
        if alive(pid):
            os.kill(pid, signal.SIGKILL)


def test(args):
    scratch = tempfile.mkdtemp(prefix="basalt-run-detach.")
    try:
        refusals()
        detached(scratch)
        tied_without_detach(scratch)
    finally:
        shutil.rmtree(scratch, True)


if __name__ == "__main__":
    main(test)
