#!/usr/bin/env python3
"""Who holds an appliance's disk image, asked before a second `./basalt run` starts on it:
    disk_holder.py IMAGE
Exit 0, saying nothing, when the image is free (or missing). Exit 3 when a running QEMU holds it,
printing one phrase for ./basalt's message: "the appliance running as PID 1234 (MCP on
http://127.0.0.1:8080/mcp, started 12:01)".

In use means locked the way QEMU locks an image it has open: OFD byte-range locks at offsets
100..299 of the file (its permission and sharing bytes), so a crashed appliance, which holds
none, never blocks the next. The holder is found by the open files in /proc (OFD locks carry no
PID); its mode comes from QEMU's arguments, never its whole command line, which may carry an API
key. Standard library only."""
import fcntl
import os
import struct
import sys
import time

F_OFD_GETLK = 36  # <fcntl.h>, Linux; not in Python's fcntl module before 3.12
QEMU_LOCK_BYTES = (100, 200)  # start, length: QEMU's raw-posix permission and sharing bytes


def locked(path):
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        probe = struct.pack("@hhqqi4x", fcntl.F_WRLCK, os.SEEK_SET, *QEMU_LOCK_BYTES, 0)
        answer = fcntl.fcntl(fd, F_OFD_GETLK, probe)
        return struct.unpack("@hhqqi4x", answer)[0] != fcntl.F_UNLCK
    except OSError:
        return False  # no OFD locks here: QEMU's own error will have to say it
    finally:
        os.close(fd)


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def openers(path):
    """PIDs of the processes that have the image open, QEMUs first."""
    want = os.stat(path)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                st = os.stat(f"/proc/{entry}/fd/{fd}")
            except OSError:
                continue
            if (st.st_dev, st.st_ino) == (want.st_dev, want.st_ino):
                found.append(int(entry))
                break
    return sorted(found, key=lambda pid: not os.path.basename((cmdline(pid) or [""])[0]).startswith("qemu-system"))


def parent(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def started(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime "))
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    when = time.localtime(boot + ticks / os.sysconf("SC_CLK_TCK"))
    same_day = time.strftime("%Y-%m-%d", when) == time.strftime("%Y-%m-%d")
    return time.strftime("%H:%M" if same_day else "%b %d %H:%M", when)


def passt_forward(socket_path):
    """ADDR:PORT of the first TCP port forwarded by the passt process serving this socket."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        argv = cmdline(entry)
        if not argv or not os.path.basename(argv[0]).startswith("passt"):
            continue
        if socket_path not in argv:
            continue
        for flag, value in zip(argv, argv[1:]):
            if flag == "-t" and "/" in value:  # ADDR/HOSTPORT:GUESTPORT
                addr, ports = value.split("/", 1)
                return f"{addr}:{ports.split(':', 1)[0]}"
    return None


def mode(argv):
    """What the appliance serves, from QEMU's arguments (and those of its passt, the network's)."""
    for a in argv:
        if "hostfwd=tcp:" in a:
            forward = a.split("hostfwd=tcp:", 1)[1].split("-", 1)[0]  # ADDR:PORT
            return f"MCP on http://{forward}/mcp"
        if a.startswith("stream,") and "addr.path=" in a:
            forward = passt_forward(a.split("addr.path=", 1)[1].split(",", 1)[0])
            if forward:
                return f"MCP on http://{forward}/mcp"
    if any(a.startswith("stdio,id=line") for a in argv) or any("mcp=serial" in a for a in argv):
        return "a stdio MCP server"
    return "console only"


def describe(path):
    holders = openers(path)
    if not holders:
        return "another process (QEMU locks the image while an appliance runs)"
    qemu = holders[0]
    argv = cmdline(qemu)
    if not os.path.basename((argv or [""])[0]).startswith("qemu-system"):  # qemu-img, qemu-nbd...
        return f"PID {qemu} ({os.path.basename((argv or ['?'])[0])})"
    # A stdio server's QEMU is a child of qemu/run.sh, the process its client spawned (./basalt
    # run execs run.sh): that is the PID to name. Otherwise run.sh exec'd QEMU and they are one.
    shown = qemu
    launcher = parent(qemu)
    if any(a.endswith("qemu/run.sh") for a in cmdline(launcher)[:2]):
        shown = launcher
    when = started(shown)
    return f"the appliance running as PID {shown} ({mode(argv)}{', started ' + when if when else ''})"


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: disk_holder.py IMAGE")
    if not locked(sys.argv[1]):
        sys.exit(0)
    print(describe(sys.argv[1]))
    sys.exit(3)  # apart from Python's own 1 and usage's 2: only this one means "in use"


if __name__ == "__main__":
    main()
