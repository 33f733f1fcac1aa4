#!/usr/bin/env python3
"""How long a client waits after `./basalt run --port P`: from launch until the first HTTP
answer to an initialize (a fresh connection tried every 20 ms, each given its full time), and
until the client configuration appears on stderr; the same with the address leased by DHCP
(`--append ip=dhcp`), as the appliance did before. The kernel is built first, so no build is
timed. Median and worst of N launches each.

  python3 tests/bench/first_answer_bench.py [--runs 5]
"""
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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=5)
    args = p.parse_args()
    if subprocess.run([BASALT, "build"], stdout=subprocess.DEVNULL).returncode != 0:
        sys.exit("build failed")
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
