#!/usr/bin/env python3
"""Boot scenario: banner, DTB-discovered devices, timer interrupts, RTC, interrupt-driven UART
input, and a clean power-off with exit status 0."""
import datetime
import re
import time

from harness import Qemu, check, main


def test(args):
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2)
    try:
        t0 = time.monotonic()
        # The commit, with "-dirty" when the tree has uncommitted changes.
        m = q.expect(r"Basalt (\S+) \(([0-9a-f]+(?:-dirty)?)\) on (.+) \[qemu-virt\]", timeout=20)
        banner_ms = (time.monotonic() - t0) * 1000
        m = q.expect(r"cpu: (\S+), MPIDR 0x[0-9a-f]+, entered at EL(\d), running at EL(\d)")
        check(m.group(1) == args.cpu, f"banner names cpu {m.group(1)}, expected {args.cpu}")
        check(m.group(2) == ("2" if args.el2 else "1"), f"entered at EL{m.group(2)}")
        check(m.group(3) == "1", "kernel must run at EL1")
        m = q.expect(r"memory: (\d+) MiB in (\d+) range.*image (\d+) KiB \(\+(\d+) KiB bss")
        check(m.group(1) == "512", f"RAM from the DTB: {m.group(1)} MiB, expected 512")
        image_kib = int(m.group(3)) + int(m.group(4))
        # Real cores: every writable page is non-executable (SCTLR_EL1.WXN, read back from the
        # register), and before the final table only the image and the device tree are normal memory.
        mmu = q.find(r"mmu: \d+ regions mapped, .*; WXN (on|off); the early map held (\d+) KiB of normal memory")
        check(mmu.group(1) == "on", "SCTLR_EL1.WXN is off")
        early_kib = int(mmu.group(2))
        check(image_kib <= early_kib <= image_kib + 2048,
              f"the early map held {early_kib} KiB of normal memory for a {image_kib} KiB image and its device tree")
        m = q.expect(r"irq: (gicv\d); timer intid (\d+) at (\d+) Hz; uart pl011 @ 0x9000000 intid (\d+); psci (\w+)")
        check(m.group(1) == f"gicv{args.gic}", f"interrupt controller {m.group(1)}")
        check(m.group(2) == "30", f"timer INTID {m.group(2)} (expected 30, non-secure physical)")
        check(m.group(4) == "33", f"UART INTID {m.group(4)} (expected 33)")
        check(m.group(5) == ("smc" if args.el2 else "hvc"), f"PSCI conduit {m.group(5)}")
        m = q.expect(r"clock: (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) \(pl031 rtc")
        rtc = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
        skew = abs((rtc - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
        check(skew < 30, f"RTC {m.group(1)} is {skew:.0f}s away from the host clock")
        m = q.expect(r"timer: (\d+) interrupts in (\d+) us \(tick (\d+) Hz")
        counted, us, hz = int(m.group(1)), int(m.group(2)), int(m.group(3))
        check(counted >= 10, f"only {counted} timer interrupts counted")
        expected_us = counted * 1_000_000 / hz
        check(0.5 * expected_us < us < 20 * expected_us, f"{counted} ticks took {us} us at {hz} Hz")
        q.expect(r"basalt> ", timeout=10)
        # The device list (DTB order) is complete once the prompt is there.
        gic_compat = "arm,gic-v3" if args.gic == 3 else "arm,cortex-a15-gic"
        q.find(rf"dtb: {re.escape(gic_compat)}\s+@ 0x008000000")
        q.find(r"dtb: arm,pl011\s+@ 0x009000000 irq 33")
        q.find(r"dtb: arm,pl031\s+@ 0x009010000 irq 34")
        q.find(r"dtb: virtio,mmio\s+x32 @ 0x00a000000..0x00a003e00 irq 48")

        # The clock advances by interrupts: the count grows while we wait.
        q.send("uptime\n")
        m = q.expect(r"uptime (\d+)\.(\d+) s, (\d+) timer interrupts")
        ticks1 = int(m.group(3))
        time.sleep(0.5)
        q.send("uptime\n")
        m = q.expect(r"uptime (\d+)\.(\d+) s, (\d+) timer interrupts")
        ticks2 = int(m.group(3))
        check(ticks2 - ticks1 >= 10, f"timer interrupts went {ticks1} -> {ticks2} over 0.5 s")

        # One-shot deadline: exactly one interrupt, at or after the deadline.
        q.send("oneshot 120\n")
        m = q.expect(r"oneshot: 120 ms deadline fired (-?\d+) us late, (\d+) timer interrupt\(s\)")
        late, fired = int(m.group(1)), int(m.group(2))
        check(late >= 0, f"one-shot fired {-late} us before its deadline")
        check(late < 500_000, f"one-shot fired {late} us late")
        check(fired == 1, f"{fired} timer interrupts during a one-shot wait")

        # Input goes through the RX interrupt path into the receive ring.
        q.send("echo hello-from-the-host 12345\n")
        q.expect(r"\nhello-from-the-host 12345\n")
        q.send("irqs\n")
        m = q.expect(r"uart intid 33: (\d+) \(rx irqs (\d+), rx bytes (\d+), rx dropped (\d+)")
        check(int(m.group(2)) > 0, "no UART receive interrupts counted")
        check(int(m.group(3)) >= len("uptime\nuptime\necho hello-from-the-host 12345\n"), "receive byte count too low")
        check(int(m.group(4)) == 0, "receive ring dropped bytes")
        q.send("nosuchcommand\n")
        q.expect(r"unknown command 'nosuchcommand'")

        q.send("poweroff\n")
        status = q.wait_exit(timeout=10)
        check(status == 0, f"exit status {status}, expected 0 (semihosting exit)")
        print(f"boot to banner: {banner_ms:.0f} ms")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
