#!/usr/bin/env python3
"""Idle scenario: a booted, idle kernel waits in WFI and must not burn a host core.
Prints the measured CPU share of the QEMU process over a 3-second window."""
from harness import Qemu, check, idle_share, main

LIMIT = 0.10  # share of one host core


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2)
    try:
        q.expect(r"basalt> ", timeout=20)
        share, cpu, wall = idle_share(q)
        print(f"idle CPU share of the QEMU process: {share * 100:.1f}% of one core "
              f"({cpu:.2f} s CPU in {wall:.2f} s)")
        check(share < LIMIT, f"idle kernel uses {share * 100:.1f}% of a core (limit {LIMIT * 100:.0f}%)")
        q.send("poweroff\n")
        check(q.wait_exit(timeout=10) == 0, "poweroff after idling")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
