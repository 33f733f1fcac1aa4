#!/usr/bin/env python3
"""The Raspberry Pi 4 image (kernel8.img) on QEMU 10's raspi4b, started as the Pi's firmware
starts it (a raw image at 0x80000, entered at EL2 on core 0) and without -dtb, so x0 holds an ATAG
list: the image's own device tree describes the board and the ATAG command line carries the boot
arguments. The banner must name what that tree describes (PL011 UART0 at 0xfe201000 through the
soc's ranges, the GIC-400, the timer at the counter's frequency, the PM watchdog), the clock comes
from the launcher (no RTC), timer and UART receive interrupts arrive, and `poweroff` ends QEMU
through the PM watchdog (no PSCI, no semihosting)."""
import datetime
import os
import re
import time

from harness import Qemu, check, main


def test(args):
    image = os.path.join(os.path.dirname(args.kernel), "kernel8.img")
    check(os.path.getsize(image) < 2 << 20, f"kernel8.img is {os.path.getsize(image)} bytes")
    started = time.monotonic()
    q = Qemu(image, board="rpi4", semihosting=False, append="hz=100")
    try:
        m = q.expect(r"Basalt (\S+) \(([0-9a-f]+(?:-dirty)?)\) on (.+) \[(\S+)\]\n", timeout=20)
        banner_ms = (time.monotonic() - started) * 1000
        check(m.group(3) == "Raspberry Pi 4 Model B (built-in device tree)" and m.group(4) == "rpi4",
              f"banner: {m.group(0)!r}")
        m = q.expect(r"cpu: (\S+), MPIDR 0x[0-9a-f]+, entered at EL(\d), running at EL(\d)")
        check(m.groups() == ("cortex-a72", "2", "1"), f"cpu line: {m.group(0)}")
        m = q.expect(r"memory: (\d+) MiB in 1 range\(s\), 0 reserved; image (\d+) KiB .* at 0x80000;")
        check(m.group(1) == "960", f"RAM {m.group(1)} MiB from the built-in tree")
        m = q.expect(r"irq: (\S+); timer intid (\d+) at (\d+) Hz; uart pl011 @ 0x([0-9a-f]+) intid (\d+); psci (\w+) v0\.0; "
                     r"power via pm watchdog @ 0x([0-9a-f]+)")
        check(m.group(1) == "gicv2", f"interrupt controller {m.group(1)}")
        check(m.group(2) == "30" and m.group(3) == "62500000", f"timer: intid {m.group(2)} at {m.group(3)} Hz (CNTFRQ)")
        check(m.group(4) == "fe201000" and m.group(5) == "153", f"UART0 at 0x{m.group(4)} intid {m.group(5)}")
        check(m.group(6) == "none" and m.group(7) == "fe100000", f"power: psci {m.group(6)}, watchdog 0x{m.group(7)}")
        # The VideoCore's mailbox, found in the device tree, its buffer at the bus address the
        # soc's dma-ranges give: what QEMU's firmware model reports for a Pi 4 B 2 GB.
        m = q.expect(r"firmware: Raspberry Pi 4 Model B rev 1\.5, 2 GiB \(revision 0xb03115\), serial [0-9a-f]{16}, "
                     r"firmware 0x[0-9a-f]{8}, ARM memory (\d+) MiB")
        check(int(m.group(1)) == 960, f"ARM memory from the mailbox: {m.group(1)} MiB")
        m = q.expect(r"clocks: arm (\d+) MHz, core (\d+) MHz, uart (\d+) MHz, emmc (\d+) MHz; mac ([0-9a-f:]{17})")
        check(int(m.group(1)) > 0 and int(m.group(3)) > 0, f"clock rates: {m.group(0)}")
        m = q.expect(r"clock: (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) \(no rtc; boot argument\)")
        clock = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
        skew = abs((clock - datetime.datetime.now(datetime.timezone.utc)).total_seconds())
        check(skew < 30, f"the launcher's clock arrived {skew:.0f} s off")
        m = q.expect(r'bootargs: "([^"]*)"')
        check("hz=100" in m.group(1) and "clock=" in m.group(1), f"boot arguments from the ATAG list: {m.group(1)!r}")
        q.expect(r"dtb: arm,gic-400\s+@ 0x0ff841000")
        q.expect(r"basalt> ", timeout=10)
        q.find(r"dtb: brcm,bcm2835-mbox\s+@ 0x0fe00b880")
        m = q.find(r"timer: (\d+) interrupts in (\d+) us")
        check(int(m.group(1)) >= 10, f"{m.group(1)} timer interrupts")

        q.send("echo hello-from-the-host\n")
        q.expect(r"\nhello-from-the-host\n")
        q.send("irqs\n")
        m = q.expect(r"uart intid 153: (\d+) \(rx irqs (\d+)")
        check(int(m.group(2)) > 0, "no UART0 receive interrupts")
        q.send("poweroff\n")
        status = q.wait_exit(timeout=10)
        check(status == 0, f"QEMU exit status {status} after the PM watchdog's halt")
        print(f"raspi4b: banner {banner_ms:.0f} ms after launch; kernel8.img {os.path.getsize(image)} bytes; "
              f"UART0, GIC-400, timer and PM watchdog from the built-in device tree; powered off by the watchdog")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
