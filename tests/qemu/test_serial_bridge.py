#!/usr/bin/env python3
"""`./basalt serial` (boot/serial_bridge.py), the host side of a serial MCP line. First on a pty
pair this script plays the board on: JSON lines reach stdout, anything else (a banner, noise) goes
to stderr, and the bridge ends soon after stdin closes. Then against the Pi 4 image on QEMU raspi4b
with its PL011 on a pty (`-serial pty`), booted with mcp=serial: initialize, tools/list and a
kernel_info call through the bridge, as an MCP client configured with `./basalt serial
/dev/pts/N` would make them."""
import json
import os
import pty
import re
import select
import socket
import subprocess
import tempfile
import time

from harness import ROOT, check, main

BRIDGE = os.path.join(ROOT, "boot", "serial_bridge.py")


def read_lines(stream, count, timeout):
    """Reads `count` newline-terminated lines from a pipe within timeout seconds."""
    buf, lines = b"", []
    deadline = time.monotonic() + timeout
    fd = stream.fileno()
    while len(lines) < count and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                break
            buf += chunk
            while b"\n" in buf:
                one, buf = buf.split(b"\n", 1)
                lines.append(one)
    return lines


def filter_on_a_pty():
    master, slave = pty.openpty()
    name = os.ttyname(slave)
    bridge = subprocess.Popen(["python3", BRIDGE, name], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
    try:
        time.sleep(0.3)  # the bridge flushes what the line held when it opened it
        os.write(master, b"Basalt 0.1.0 on a board\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\r\nnoise\n")
        out = read_lines(bridge.stdout, 1, 5)
        check(out == [b'{"jsonrpc":"2.0","id":1,"result":{}}'], f"stdout got {out}")
        bridge.stdin.write(b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n')
        bridge.stdin.flush()
        got = b""
        deadline = time.monotonic() + 5
        while b"\n" not in got and time.monotonic() < deadline:
            if select.select([master], [], [], 0.1)[0]:
                got += os.read(master, 4096)
        check(got == b'{"jsonrpc":"2.0","id":2,"method":"ping"}\n', f"the board got {got!r}")
        bridge.stdin.close()
        started = time.monotonic()
        bridge.wait(timeout=5)
        check(time.monotonic() - started < 3, "the bridge did not end after stdin closed")
        err = bridge.stderr.read().decode()
        check("(board) Basalt 0.1.0 on a board" in err and "(board) noise" in err, f"stderr: {err!r}")
    finally:
        bridge.kill()
        os.close(master)
        os.close(slave)


def qmp(sock, command, **arguments):
    sock.sendall(json.dumps({"execute": command, "arguments": arguments} if arguments else {"execute": command}).encode() + b"\n")
    buf = b""
    while True:
        buf += sock.recv(65536)
        for line in buf.split(b"\n"):
            if line.strip():
                msg = json.loads(line)
                if "return" in msg or "error" in msg:
                    return msg
        buf = buf[buf.rfind(b"\n") + 1:] if b"\n" in buf else buf


def against_raspi4b(kernel):
    with tempfile.TemporaryDirectory(prefix="basalt-serial-") as d:
        qmp_path = os.path.join(d, "qmp.sock")
        cmd = ["setpriv", "--pdeathsig", "KILL", "qemu-system-aarch64", "-M", "raspi4b", "-m", "2G", "-kernel", kernel,
               "-display", "none", "-monitor", "none", "-serial", "pty",
               "-chardev", f"socket,id=qmp,path={qmp_path},server=on,wait=off", "-mon", "chardev=qmp,mode=control",
               "-append", f"mcp=serial clock={int(time.time())}"]
        q = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        bridge = None
        try:
            line = b""
            deadline = time.monotonic() + 10
            while b"\n" not in line and time.monotonic() < deadline:
                if select.select([q.stdout], [], [], 0.1)[0]:
                    line += os.read(q.stdout.fileno(), 4096)
            m = re.search(rb"char device redirected to (/dev/pts/\d+)", line)
            check(m is not None, f"QEMU named no pty: {line!r}")
            tty_path = m.group(1).decode()
            for _ in range(100):
                if os.path.exists(qmp_path):
                    break
                time.sleep(0.05)
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.connect(qmp_path)
            sock.recv(65536)  # greeting
            qmp(sock, "qmp_capabilities")
            # The kernel enables the UART's FIFO during boot, which flushes what the receiver
            # holds: wait for that (LCRH.FEN, read without side effects) before anything is sent.
            for _ in range(500):
                r = qmp(sock, "human-monitor-command", **{"command-line": "xp /1wx 0xfe20102c"})
                v = re.search(r"fe20102c: 0x([0-9a-f]+)", r.get("return", ""))
                if v and int(v.group(1), 16) & 0x10:
                    break
                time.sleep(0.01)
            bridge = subprocess.Popen(["python3", BRIDGE, tty_path], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE)
            time.sleep(0.3)
            requests = [
                {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                 "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                {"jsonrpc": "2.0", "method": "notifications/initialized"},
                {"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "kernel_info", "arguments": {}}},
            ]
            started = time.monotonic()
            for r in requests:
                bridge.stdin.write(json.dumps(r).encode() + b"\n")
            bridge.stdin.flush()
            answers = {json.loads(l)["id"]: json.loads(l) for l in read_lines(bridge.stdout, 3, 20)}
            check(sorted(answers) == [1, 2, 3], f"answers: {list(answers)}")
            check(answers[1]["result"]["serverInfo"]["name"] == "basalt", f"initialize: {answers[1]}")
            names = [t["name"] for t in answers[2]["result"]["tools"]]
            check({"kernel_info", "vector_search", "collection_import"} <= set(names) and "nextCursor" not in answers[2]["result"],
                  f"tools (every one in the first page): {names}")
            info = answers[3]["result"]["structuredContent"]
            check(info["board"] == "rpi4" and info["firmware"]["revision"] == "0xb03115", f"kernel_info: {info}")
            took = time.monotonic() - started
            bridge.stdin.close()
            bridge.wait(timeout=5)
            return took
        finally:
            if bridge:
                bridge.kill()
            q.kill()
            q.wait()


def test(args):
    filter_on_a_pty()
    took = against_raspi4b(os.path.join(os.path.dirname(args.kernel), "kernel8.img"))
    print(f"serial bridge: JSON lines to stdout, the rest to stderr; initialize, tools/list and kernel_info on "
          f"raspi4b's PL011 through a pty in {took * 1000:.0f} ms")


if __name__ == "__main__":
    main(test)
