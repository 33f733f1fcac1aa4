#!/usr/bin/env python3
"""Runs after every QEMU test of the suite (a CTest fixture cleanup): no QEMU that a test started
may still be running. Tests run with their working directory in the build tree, and so does
every QEMU they start, directly or through qemu/run.sh; a QEMU found there is reported, with its
command line, and ended, and the suite fails."""
import os
import signal
import sys


def qemus_under(build_dir):
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/stat") as f:
                after = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
            cwd = os.readlink(f"/proc/{pid}/cwd")
        except OSError:
            continue  # gone meanwhile, or not ours to read
        if after[0] == "Z" or not argv or not os.path.basename(argv[0]).startswith("qemu-system-"):
            continue
        if cwd == build_dir or cwd.startswith(build_dir + os.sep):
            found.append((pid, cwd, " ".join(argv)))
    return found


def main():
    build_dir = os.path.realpath(sys.argv[1])
    left = qemus_under(build_dir)
    for pid, cwd, cmd in left:
        print(f"left running: pid {pid} in {cwd}: {cmd[:400]}")
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    if left:
        print(f"FAIL: {len(left)} QEMU process(es) started by the tests outlived them")
        sys.exit(1)
    print(f"PASS: no QEMU left running under {build_dir}")


if __name__ == "__main__":
    main()
