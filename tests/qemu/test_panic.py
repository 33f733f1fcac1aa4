#!/usr/bin/env python3
"""Panic scenario: `panic` from the shell prints the reason and a frame-pointer backtrace whose
addresses lie in kernel text, then powers off with exit status 3."""
import subprocess

from harness import Qemu, check, main


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2)
    try:
        q.expect(r"basalt> ", timeout=20)
        q.send("panic checking-the-panic-path\n")
        q.expect(r"KERNEL PANIC in task 'shell': requested from the shell: checking-the-panic-path")
        q.expect(r"backtrace:\n")
        frames = []
        while True:
            m = q.expect(r"  #(\d+)  0x([0-9a-f]{16})\n|\(symbolise")
            if m.group(0).startswith("(symbolise"):
                break
            frames.append(int(m.group(2), 16))
        check(len(frames) >= 3, f"backtrace has {len(frames)} frames")
        out = subprocess.run(["aarch64-linux-gnu-addr2line", "-f", "-C", "-e", args.kernel] + [hex(f - 4) for f in frames],
                             capture_output=True, text=True).stdout
        names = out.split("\n")[0::2]
        check(any("cmd_panic" in n for n in names), f"backtrace does not pass through cmd_panic: {names}")
        check(any("shell::task_main" in n for n in names), f"backtrace does not pass through the shell: {names}")
        check(any("task_trampoline" in n for n in names), f"backtrace does not reach the task entry: {names}")
        status = q.wait_exit(timeout=10)
        check(status == 3, f"exit status {status}, expected 3")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
