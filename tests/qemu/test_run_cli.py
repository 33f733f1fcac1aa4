#!/usr/bin/env python3
"""`./basalt run` as a new user meets it. As a stdio MCP server (what a client spawns) it says
nothing on stderr when the kernel is up to date and answers on stdout. With `--port P` it prints
the client configuration only once the endpoint answers (a request sent the moment it appears is
answered), under QEMU's user network the address is set at boot (no DHCP wait), and the console
names port P, the one the client uses. On the console: a log line that arrives while a command is
being typed goes above the prompt, which is drawn again with the typed text; `help` lists exactly
the commands the README's shell section names. A second appliance on a disk image the first
holds (HTTP or stdio, either way round) is told in one line on stderr which PID holds it and
what to pass instead, and starts nothing."""
import atexit
import json
import os
import re
import select
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from harness import ROOT, check, main, mcp_post

BASALT = os.path.join(ROOT, "basalt")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


SCRATCH = tempfile.mkdtemp(prefix="basalt-run-cli.")
atexit.register(shutil.rmtree, SCRATCH, True)


def scratch_disk():
    """A disk image of the test's own (./basalt run's default, build/disk.img, belongs to the user and
    QEMU locks it while an appliance runs), made beforehand so that creating it prints nothing."""
    path = os.path.join(SCRATCH, f"disk{len(os.listdir(SCRATCH))}.img")
    with open(path, "wb") as f:
        f.truncate(64 << 20)
    return path


def stdio_is_quiet():
    msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize",
             "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
            {"jsonrpc": "2.0", "id": 2, "method": "ping"}]
    r = subprocess.run([BASALT, "run", "--stdio", "--disk", scratch_disk()], input="".join(json.dumps(m) + "\n" for m in msgs),
                       capture_output=True, text=True, timeout=60)
    answers = [json.loads(line) for line in r.stdout.splitlines() if line.strip()]
    check([a.get("id") for a in answers] == [1, 2], f"stdio answers: {r.stdout!r}")
    check(r.stderr == "", f"a stdio server up to date says nothing on stderr, got: {r.stderr!r}")


class Console:
    """The console on the launched process's stdout, read without blocking."""

    def __init__(self, proc):
        self.proc = proc
        self.text = ""

    def until(self, pattern, timeout=20.0):
        deadline = time.monotonic() + timeout
        while True:
            m = re.search(pattern, self.text, re.S)
            if m:
                return m
            left = deadline - time.monotonic()
            check(left > 0, f"console never showed {pattern!r}; it shows:\n{self.text[-2000:]}")
            if select.select([self.proc.stdout], [], [], min(left, 0.2))[0]:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                check(chunk, f"console closed before {pattern!r}")
                self.text += chunk.decode(errors="replace")

    def type(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()




def readme_shell_commands():
    with open(os.path.join(ROOT, "README.md")) as f:
        section = f.read().split("## The shell", 1)[1].split("\n## ", 1)[0]
    paragraph = section.split("`help` lists the commands:", 1)[1].split("(`qemu.run_cli`", 1)[0]
    return sorted({"help"} | {m.split()[0] for m in re.findall(r"`([^`]+)`", paragraph)})


def http_run():
    port = free_port()
    proc = subprocess.Popen([BASALT, "run", "--port", str(port), "--disk", scratch_disk()], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = ""
        deadline = time.monotonic() + 60
        while "\nInspector:" not in err:
            check(time.monotonic() < deadline and proc.poll() is None, f"no client configuration: {err!r}")
            if select.select([proc.stderr], [], [], 0.5)[0]:
                chunk = os.read(proc.stderr.fileno(), 65536)
                check(chunk, f"stderr closed early: {err!r}")
                err += chunk.decode(errors="replace")
        lines = err.splitlines()
        # (Where passt cannot run, run.sh's one line saying so is the only thing allowed before it.)
        if lines and lines[0].startswith("run.sh: passt cannot run here"):
            lines = lines[1:]
        # The first request, sent the moment the configuration appears, is answered.
        url = f"http://127.0.0.1:{port}/mcp"
        check(lines[0] == f"MCP over Streamable HTTP: {url} (answering)", f"nothing before the URL: {lines}")
        config = json.loads(lines[2])["mcpServers"]["basalt"]
        check(config["url"] == url, f"config: {config}")
        key = config["headers"]["Authorization"].removeprefix("Bearer ")
        status, answer, session = mcp_post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}, key)
        check(status == 200 and answer["result"]["serverInfo"]["name"] == "basalt", f"initialize: {answer}")

        console = Console(proc)
        console.until(r"net: vn0 static address 10\.0\.2\.15 ")
        console.until(rf"serving /mcp on port {port} ")
        check("dhcp" not in console.text and not re.search(r"port 8080\b", console.text),
              f"no lease awaited and no other port named:\n{console.text}")

        # A log line while a command is half typed: above the prompt, then the prompt and the text.
        console.until(r"basalt> $", 10)
        console.type("ech")
        console.until(r"basalt> ech$", 10)
        mcp_post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, key, session)
        status, answer, _ = mcp_post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                       "params": {"name": "kernel_diagnose", "arguments": {}}}, key, session)
        check(status == 200 and answer["result"]["isError"] is False, f"kernel_diagnose: {answer}")
        console.until(r"basalt> ech\r\x1b\[K\[[ 0-9.]+\] info +diagnose: [^\n]*\nbasalt> ech", 30)
        console.type("o typed-through\n")
        console.until(r"\ntyped-through\r?\n", 10)

        console.type("help\n")
        listing = console.until(r"\n  help .*?\n  reboot [^\n]*\n").group(0)
        shell = sorted(re.findall(r"^  (\S+) ", listing, re.M))
        check(shell == readme_shell_commands(), f"help lists {shell}, the README {readme_shell_commands()}")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}


def in_use_line(disk, pid, what, port_hint=""):
    """The one line a second appliance on a held image gets (the start time as HH:MM, or with the
    date when the first began on another day)."""
    return (re.escape(f"basalt: {disk} is in use by the appliance running as PID {pid} ({what}, started ")
            + r"([A-Z][a-z]{2} \d\d )?\d\d:\d\d" + re.escape(
                "); use --disk OTHER.img for a second appliance with its own data, or --no-disk for one without storage"
                + port_hint) + "\n")


def second_is_told(cmd, disk, pid, what, port_hint=""):
    r = subprocess.run(cmd, input="", capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and re.fullmatch(in_use_line(disk, pid, what, port_hint), r.stderr),
          f"{cmd[1:]}: exit {r.returncode}, stderr {r.stderr!r}")
    check(r.stdout == "", f"{cmd[1:]}: nothing on stdout (a stdio client reads it), got {r.stdout!r}")


def two_appliances():
    """A second appliance on an image the first holds is told in one line who holds it and what to
    do instead, on stderr, before any QEMU starts; the held image is free again once the first is
    killed (-9: no lock left behind, no stale record)."""
    disk, port = scratch_disk(), free_port()
    first = subprocess.Popen([BASALT, "run", "--port", str(port), "--disk", disk], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        err = ""
        deadline = time.monotonic() + 60
        while "\nInspector:" not in err:  # the endpoint answers: QEMU runs and holds the image
            check(time.monotonic() < deadline and first.poll() is None, f"the first appliance never answered: {err!r}")
            if select.select([first.stderr], [], [], 0.5)[0]:
                err += os.read(first.stderr.fileno(), 65536).decode(errors="replace")
        # run.sh execs QEMU: the PID the test started is the appliance's.
        what = f"MCP on http://127.0.0.1:{port}/mcp"
        second_is_told([BASALT, "run", "--port", str(free_port()), "--disk", disk], disk, first.pid, what)
        second_is_told([BASALT, "run", "--stdio", "--disk", disk], disk, first.pid, what)
        second_is_told([BASALT, "run", "--port", str(port), "--disk", disk], disk, first.pid, what,
                       f", each with --port N (the first has {port})")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()

    # A stdio server (a client's, holding its line open): QEMU is run.sh's child, and the PID named
    # is the one its client spawned.
    first = subprocess.Popen([BASALT, "run", "--stdio", "--disk", disk], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    try:
        first.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        first.stdin.flush()
        check(select.select([first.stdout], [], [], 60)[0] and b'"id":1' in first.stdout.readline(),
              "the stdio appliance on an image freed by kill -9 did not answer")
        second_is_told([BASALT, "run", "--port", str(free_port()), "--disk", disk], disk, first.pid,
                       "a stdio MCP server")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()


def test(args):
    stdio_is_quiet()
    http_run()
    two_appliances()


if __name__ == "__main__":
    main(test)
