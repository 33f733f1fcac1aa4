#!/usr/bin/env python3
"""Idle scenario: a booted, idle kernel waits in WFI and must not burn a host core.
Prints the measured CPU share of the QEMU process over a 3-second window."""
import time

from harness import Qemu, check, main

LIMIT = 0.10  # share of one host core


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2)
    try:
        q.expect(r"basalt> ", timeout=20)
        time.sleep(1.0)
        c0, t0 = q.cpu_seconds(), time.monotonic()
        time.sleep(3.0)
        c1, t1 = q.cpu_seconds(), time.monotonic()
        share = (c1 - c0) / (t1 - t0)
        print(f"idle CPU share of the QEMU process: {share * 100:.1f}% of one core "
              f"({c1 - c0:.2f} s CPU in {t1 - t0:.2f} s)")
        check(share < LIMIT, f"idle kernel uses {share * 100:.1f}% of a core (limit {LIMIT * 100:.0f}%)")
        q.send("poweroff\n")
        check(q.wait_exit(timeout=10) == 0, "poweroff after idling")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
