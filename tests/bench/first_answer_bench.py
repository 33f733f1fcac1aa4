#!/usr/bin/env python3
"""How long a client waits after `./basalt run --port P`: from launch until the first HTTP
answer to an initialize (a fresh connection tried every 20 ms, each given its full time), and
until the client configuration appears on stderr; the same with the address leased by DHCP
(`--append ip=dhcp`), as the appliance did before. The kernel is built first, so no build is
timed. Median and worst of N launches each.

With --stdio, the same for a stdio MCP server (what a client spawns): from spawning
`./basalt run --stdio --no-disk`, and `qemu/run.sh --stdio`, with the request already written
to its stdin, until the first answer line on its stdout; for a 2026-07-28 `server/discover` (the
Vercel AI SDK 2.x gives it 1,000 ms before it falls back to the 2025 handshake) and for a 2025
`initialize`. Also the guest's own share: when the kernel logged that the serial bridge serves
(kernel://log, time since reset), read after the first answer.

  python3 tests/bench/first_answer_bench.py [--runs 5]
  python3 tests/bench/first_answer_bench.py --stdio [--runs 10]
"""
import json
import argparse
import os
import select
import signal
import socket
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASALT = os.path.join(ROOT, "basalt")
INIT = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
        b'"capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def answered(port):
    """One initialize on a new connection; True once any HTTP status line comes back."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                      b"Accept: application/json, text/event-stream\r\nContent-Length: %d\r\n\r\n%s"
                      % (port, len(INIT), INIT))
            return s.recv(16).startswith(b"HTTP/1.1 ")
    except OSError:
        return False


def launch(extra):
    port = free_port()
    t0 = time.monotonic()
    proc = subprocess.Popen([BASALT, "run", "--port", str(port), *extra], stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    first = printed = None
    err = b""
    try:
        while time.monotonic() - t0 < 60 and (first is None or printed is None):
            if printed is None and select.select([proc.stderr], [], [], 0)[0]:
                err += os.read(proc.stderr.fileno(), 4096)
                if b"Client configuration" in err:
                    printed = time.monotonic() - t0
            if first is None and answered(port):
                first = time.monotonic() - t0
            time.sleep(0.02)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    return first, printed


MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {},
               "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"}}
STDIO_FIRST = {
    "server/discover": {"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}},
    "initialize": {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                   "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                              "clientInfo": {"name": "bench", "version": "1"}}},
}


def read_line(proc, pending, deadline):
    """The next line of proc's stdout (None past the deadline or at its end), and what follows it."""
    while b"\n" not in pending:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([proc.stdout], [], [], left)[0]:
            return None, pending
        chunk = os.read(proc.stdout.fileno(), 1 << 20)
        if not chunk:
            return None, pending
        pending += chunk
    line, _, rest = pending.partition(b"\n")
    return line, rest


def serving_ms(proc, pending, method):
    """When the guest logged that the serial bridge serves, in ms since reset (None if unknown)."""
    if method == "initialize":
        proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        params = {"uri": "kernel://log"}
    else:
        params = {"uri": "kernel://log", "_meta": MODERN_META}
    proc.stdin.write((json.dumps({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": params}) + "\n").encode())
    proc.stdin.flush()
    deadline = time.monotonic() + 10
    while True:
        line, pending = read_line(proc, pending, deadline)
        if line is None:
            return None
        answer = json.loads(line)
        if answer.get("id") == 2:
            break
    try:
        records = json.loads(answer["result"]["contents"][0]["text"])["records"]
    except (KeyError, IndexError, ValueError):
        return None
    for r in records:
        if r["text"].startswith("mcp: serving on the serial line"):
            return r["uptime_ns"] / 1e6
    return None


def launch_stdio(cmd, method):
    """Spawn to the first answer, in seconds, with the request written at spawn; and the guest's
    time to serving."""
    t0 = time.monotonic()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            start_new_session=True)
    try:
        proc.stdin.write((json.dumps(STDIO_FIRST[method]) + "\n").encode())
        proc.stdin.flush()
        line, pending = read_line(proc, b"", t0 + 60)
        first = time.monotonic() - t0
        if line is None or json.loads(line).get("id") != 1 or "result" not in json.loads(line):
            sys.exit(f"{' '.join(cmd)}: no answer to {method} within 60 s: {line!r}")
        return first, serving_ms(proc, pending, method)
    finally:
        # SIGTERM, as a client ends a stdio server: run.sh stops QEMU and removes its FIFOs.
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def stdio_main(runs):
    commands = (("./basalt run --stdio --no-disk", [BASALT, "run", "--stdio", "--no-disk"]),
                ("qemu/run.sh --stdio", [os.path.join(ROOT, "qemu", "run.sh"), "--stdio"]))
    print(f"load average at start: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; {runs} launches each")
    print(f"{'command':<32}{'first request':<17}{'first answer (median/worst)':>30}{'guest serving (median/worst)':>32}")
    for label, cmd in commands:
        # One launch untimed: the build check's first pass after a build, and a cold page cache,
        # are not what a client meets from then on.
        launch_stdio(cmd, "initialize")
        for method in STDIO_FIRST:
            firsts, guest = [], []
            for _ in range(runs):
                first, serving = launch_stdio(cmd, method)
                firsts.append(first)
                guest.append(serving if serving is not None else float("nan"))
            print(f"{label:<32}{method:<17}{statistics.median(firsts):>18.3f} s / {max(firsts):.3f} s"
                  f"{statistics.median(guest):>19.0f} ms / {max(guest):.0f} ms")
    print(f"load average at end: {os.getloadavg()[0]:.2f}")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int)
    p.add_argument("--stdio", action="store_true", help="time a stdio server's first answer instead")
    args = p.parse_args()
    # The kernel only, for a stdio run (it is all a stdio launch needs); everything otherwise.
    build = ["cmake", "--build", os.path.join(ROOT, "build", "kernel"), "--target", "basalt_images"] if args.stdio else [BASALT, "build"]
    if subprocess.run(build, stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("build failed")
    if args.stdio:
        stdio_main(args.runs or 10)
        return
    args.runs = args.runs or 5
    print(f"{'address':<22}{'first answer (median/worst)':>30}{'config printed (median/worst)':>32}")
    for label, extra in (("static (./basalt run)", []), ("DHCP (ip=dhcp)", ["--append", "ip=dhcp"])):
        firsts, printeds = [], []
        for _ in range(args.runs):
            first, printed = launch(extra)
            if first is None:
                sys.exit(f"{label}: no answer within 60 s")
            firsts.append(first)
            printeds.append(printed if printed is not None else float("nan"))
        print(f"{label:<22}{statistics.median(firsts):>18.2f} s / {max(firsts):.2f} s"
              f"{statistics.median(printeds):>20.2f} s / {max(printeds):.2f} s")


if __name__ == "__main__":
    main()
