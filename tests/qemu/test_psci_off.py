#!/usr/bin/env python3
"""Power-off through PSCI SYSTEM_OFF (no semihosting): QEMU must exit by itself, status 0."""
from harness import Qemu, check, main


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, semihosting=False)
    try:
        m = q.expect(r"psci (\w+) v(\d+)\.(\d+)", timeout=20)
        check(int(m.group(2)) >= 1, f"PSCI version {m.group(2)}.{m.group(3)}")
        q.expect(r"basalt> ")
        q.send("poweroff\n")
        status = q.wait_exit(timeout=10)
        check(status == 0, f"exit status {status} after PSCI SYSTEM_OFF")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
