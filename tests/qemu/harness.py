"""Drives a Basalt kernel in QEMU from the outside: start, read the serial console, type into
it, wait for the exit status, measure the QEMU process's CPU use. Used by every QEMU test."""
import argparse
import atexit
import itertools
import os
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class TestFailure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise TestFailure(message)


_monitor_dir = None
_monitor_count = itertools.count(1)


def _monitor_socket():
    """A path for one QEMU's monitor (run.sh's BASALT_QEMU_MONITOR), in a directory this process
    removes when it ends."""
    global _monitor_dir
    if _monitor_dir is None:
        _monitor_dir = tempfile.mkdtemp(prefix="basalt-mon.")
        atexit.register(shutil.rmtree, _monitor_dir, True)
    return os.path.join(_monitor_dir, f"{next(_monitor_count)}.sock")


class Qemu:
    def __init__(self, kernel, cpu="cortex-a72", gic=3, el2=False, append="", semihosting=True, memory="512M",
                 run_args=(), board="virt"):
        """run_args: further qemu/run.sh options (e.g. ["--net", "--hostfwd", "5555:80"]).
        board="rpi4": the Pi 4 image (kernel8.img) on raspi4b, whose CPU, GIC and RAM are fixed."""
        if board == "virt":
            cmd = [os.path.join(ROOT, "qemu", "run.sh"), "--kernel", kernel, "--cpu", cpu, "--gic", str(gic),
                   "--memory", memory, *run_args]
        else:
            cmd = [os.path.join(ROOT, "qemu", "run.sh"), "--board", board, "--kernel", kernel, *run_args]
        if el2:
            cmd.append("--el2")
        if semihosting:
            cmd.append("--semihosting")
        if append:
            cmd += ["--append", append]
        self.cmd = cmd
        self.kernel = kernel
        self.started = time.monotonic()
        # Every QEMU serves its monitor on a socket of its own: a test that fails while it runs
        # prints where the guest's tasks were (kill(), qemu/task_dump.py) before it ends QEMU.
        self.monitor = _monitor_socket()
        env = dict(os.environ, BASALT_QEMU_MONITOR=self.monitor)
        # run.sh execs QEMU, so this PID is QEMU's own.
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=env)
        self.output = ""
        self.pos = 0

    def _read_some(self, timeout):
        ready, _, _ = select.select([self.proc.stdout], [], [], max(0.0, timeout))
        if not ready:
            return False
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            return None
        # The UART sends CRLF; carriage returns carry no information for the tests.
        self.output += chunk.decode("utf-8", errors="replace").replace("\r", "")
        return True

    def expect(self, pattern, timeout=10.0):
        """Waits for a regex in the output after the previous match; returns the match."""
        regex = re.compile(pattern, re.MULTILINE)
        deadline = time.monotonic() + timeout
        while True:
            m = regex.search(self.output, self.pos)
            if m and m.end() == len(self.output) and self.proc.poll() is None:
                # The match touches the end of what has arrived: a greedy group may still be
                # growing ("psci s" of "psci smc"). Let the rest of the burst arrive first.
                if self._read_some(0.2):
                    continue
            if m:
                self.pos = m.end()
                return m
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure(f"timed out after {timeout}s waiting for /{pattern}/; output tail:\n"
                                  + self.output[-3000:])
            if self._read_some(min(left, 0.5)) is None:  # end of output: QEMU has exited
                raise TestFailure(f"QEMU exited (status {self.proc.wait()}) before /{pattern}/; output tail:\n"
                                  + self.output[-3000:])

    def find(self, pattern):
        """Searches everything received so far, in any order (for unordered lists); returns the match."""
        m = re.search(pattern, self.output, re.MULTILINE)
        if not m:
            raise TestFailure(f"/{pattern}/ not found in the output:\n" + self.output[-3000:])
        return m

    def send(self, text):
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def wait_exit(self, timeout=10.0):
        deadline = time.monotonic() + timeout
        while self.proc.poll() is None:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TestFailure(f"QEMU still running after {timeout}s; output tail:\n" + self.output[-2000:])
            self._read_some(min(left, 0.2))
        while self._read_some(0.05):
            pass
        return self.proc.returncode

    def cpu_seconds(self):
        """User+system CPU time of the QEMU process so far (from /proc)."""
        with open(f"/proc/{self.proc.pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14, 15 of stat)
        return ticks / os.sysconf("SC_CLK_TCK")

    def dump_tasks(self):
        """Prints every task of the running guest (state, the system call it waits in, its stack)."""
        if self.proc.poll() is not None or not os.path.exists(self.monitor):
            return
        elf = [self.kernel] if self.kernel.endswith(".elf") else []
        try:
            r = subprocess.run([os.path.join(ROOT, "qemu", "task_dump.py"), self.monitor, *elf], capture_output=True,
                               text=True, timeout=60)
            print("the guest's tasks when the test failed (qemu/task_dump.py):\n" + r.stdout + r.stderr, flush=True)
        except (OSError, subprocess.TimeoutExpired) as e:
            print(f"no task dump: {e}", flush=True)

    def kill(self):
        if self.proc.poll() is None:
            if sys.exc_info()[0] is not None:  # ended by a failure on its way out: show the guest first
                self.dump_tasks()
            self.proc.kill()
            self.proc.wait()

    def stderr_text(self):
        try:
            return self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""
        except Exception:
            return ""


def idle_share(q, settle=1.0, window=3.0):
    """The share of one host core the QEMU process used over `window` seconds, after `settle`
    seconds of letting the guest go quiet: (share, CPU seconds, wall seconds)."""
    time.sleep(settle)
    c0, t0 = q.cpu_seconds(), time.monotonic()
    time.sleep(window)
    c1, t1 = q.cpu_seconds(), time.monotonic()
    return (c1 - c0) / (t1 - t0), c1 - c0, t1 - t0


def main(test_fn):
    """Common entry: parses the machine configuration, runs test_fn(args), prints a verdict."""
    p = argparse.ArgumentParser()
    p.add_argument("--kernel", default=os.path.join(ROOT, "build", "kernel", "basalt.elf"))
    p.add_argument("--cpu", default="cortex-a72")
    p.add_argument("--gic", type=int, default=3)
    p.add_argument("--el2", action="store_true")
    p.add_argument("--line", choices=["uart", "virtio"], default="uart",
                   help="for MCP line tests: the PL011 or the virtio console port (run.sh --stdio)")
    args = p.parse_args()
    label = f"{os.path.basename(sys.argv[0])} cpu={args.cpu} gic=v{args.gic} el={'2' if args.el2 else '1'} line={args.line}"
    try:
        test_fn(args)
    except TestFailure as e:
        print(f"FAIL {label}: {e}")
        sys.exit(1)
    print(f"PASS {label}")


def mcp_post(url, body, key, session=None):
    """One JSON-RPC message to an appliance's /mcp with an API key (and a session, once given):
    (HTTP status, the parsed answer or None, the Mcp-Session-Id header)."""
    import json
    import urllib.request
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
    if session:
        headers["Mcp-Session-Id"] = session
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers=headers)
    with urllib.request.urlopen(req, timeout=30) as r:
        text = r.read()
        return r.status, json.loads(text) if text else None, r.headers.get("Mcp-Session-Id")
