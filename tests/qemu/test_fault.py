#!/usr/bin/env python3
"""Fault scenario: a deliberate fault selected by boot argument produces the decoded register
dump (exception class, fault status, FAR, ELR, task name), a backtrace, and exit status 3."""
import re

from harness import Qemu, check, main

CASES = [
    # (fault=, ESR class regex, decoded fault regex, FAR check)
    ("data", r"EC 0x25 data abort \(same EL\)", r"translation fault, level \d, read", "0x0000000000001000"),
    ("write", r"EC 0x25 data abort \(same EL\)", r"permission fault, level \d, write", None),
    ("exec", r"EC 0x21 instruction abort \(same EL\)", r"permission fault, level \d", None),
    ("undef", r"EC 0x00 unknown reason", r"", None),
    ("brk", r"EC 0x3c BRK instruction", r"", None),
]


def test(args):
    for kind, ec, fault, far in CASES:
        q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append=f"fault={kind}")
        try:
            q.expect(r"fault injection: " + kind, timeout=20)
            q.expect(r"\*\*\* EXCEPTION: synchronous \(current EL, SPx\) in task 'kernel-main'")
            m = q.expect(r"ESR  0x[0-9a-f]{16}  (.*)\n")
            check(re.search(ec, m.group(1)), f"fault={kind}: ESR decoded as '{m.group(1)}'")
            check(re.search(fault, m.group(1)), f"fault={kind}: fault status in '{m.group(1)}'")
            m = q.expect(r"FAR  (0x[0-9a-f]{16})")
            if far:
                check(m.group(1) == far, f"fault={kind}: FAR {m.group(1)}, expected {far}")
            q.expect(r"ELR  0x[0-9a-f]{16}  SPSR 0x[0-9a-f]{16}")
            q.expect(r"x0   0x[0-9a-f]{16}  x1   0x[0-9a-f]{16}")
            q.expect(r"x30  0x[0-9a-f]{16}  sp   0x[0-9a-f]{16}")
            q.expect(r"backtrace:\n  #0  0x[0-9a-f]{16}\n  #1  0x[0-9a-f]{16}")
            q.expect(r"KERNEL PANIC in task 'kernel-main': unhandled synchronous")
            status = q.wait_exit(timeout=10)
            check(status == 3, f"fault={kind}: exit status {status}, expected 3 (panic)")
        finally:
            q.kill()
        print(f"  fault={kind}: decoded dump and exit status 3")

    # The kernel's own stacks have guard pages: an overflow is caught by the vectors (which would
    # otherwise fault on every store of the next frame) and reported from the overflow stack.
    for kind, stack in (("boot_stack", "boot stack"), ("exception_stack", "exception stack")):
        q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append=f"fault={kind}")
        try:
            q.expect(r"fault injection: " + kind, timeout=20)
            q.expect(rf"KERNEL PANIC in task 'kernel-main': kernel stack overflow: {stack} guard page hit")
            m = q.expect(r"SP   (0x[0-9a-f]{16})  FAR (0x[0-9a-f]{16})")
            check(abs(int(m.group(2), 16) - int(m.group(1), 16)) < 4096,
                  f"fault={kind}: FAR {m.group(2)} is not at the stack pointer {m.group(1)}")
            q.expect(r"backtrace:\n  #0  0x[0-9a-f]{16}\n  #1  0x[0-9a-f]{16}")
            q.expect(r"powering off")
            status = q.wait_exit(timeout=10)
            check(status == 3, f"fault={kind}: exit status {status}, expected 3 (panic)")
            check("EXCEPTION" not in q.output, f"fault={kind}: the overflow went through the ordinary fault path")
        finally:
            q.kill()
        print(f"  fault={kind}: guard page hit, reported from the overflow stack, exit status 3")

    # A fault while the first fault is being reported ends in one line, not a recursion.
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append="fault=nested")
    try:
        q.expect(r"\*\*\* EXCEPTION: synchronous \(current EL, SPx\) in task 'kernel-main'", timeout=20)
        q.expect(r"KERNEL PANIC \(nested\): synchronous \(current EL, SPx\) \(ESR 0x96[0-9a-f]+, ELR 0x[0-9a-f]+, FAR 0x1000\) "
                 r"while reporting a panic")
        status = q.wait_exit(timeout=10)
        check(status == 3, f"fault=nested: exit status {status}, expected 3 (panic)")
        check(q.output.count("*** EXCEPTION") == 1, "fault=nested: the report was started more than once")
    finally:
        q.kill()
    print("  fault=nested: one report, one nested line, exit status 3")


if __name__ == "__main__":
    main(test)
