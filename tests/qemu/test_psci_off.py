#!/usr/bin/env python3
"""Power management through PSCI (no semihosting): SYSTEM_RESET reboots the machine (the
banner appears again), SYSTEM_OFF makes QEMU exit by itself with status 0."""
from harness import Qemu, check, main


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, semihosting=False)
    try:
        m = q.expect(r"psci (\w+) v(\d+)\.(\d+)", timeout=20)
        check(int(m.group(2)) >= 1, f"PSCI version {m.group(2)}.{m.group(3)}")
        q.expect(r"basalt> ")
        q.send("reboot\n")
        q.expect(r"rebooting")
        q.expect(r"Basalt \S+ \([0-9a-f]+(?:-dirty)?\) on", timeout=20)  # the second boot
        q.expect(r"basalt> ", timeout=20)
        q.send("uptime\n")
        m = q.expect(r"uptime (\d+)\.(\d+) s")
        check(int(m.group(1)) < 5, f"uptime {m.group(1)} s after reboot: the clock did not restart")
        q.send("poweroff\n")
        status = q.wait_exit(timeout=10)
        check(status == 0, f"exit status {status} after PSCI SYSTEM_OFF")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
