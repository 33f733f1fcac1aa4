#!/usr/bin/env python3
"""The Raspberry Pi 4 image (kernel8.img) on QEMU 10's raspi4b, started as the Pi's firmware
starts it (a raw image at 0x80000, entered at EL2 on core 0), twice: without -dtb, so x0 holds an
ATAG list and the image's own device tree describes the board (the ATAG command line carries the
boot arguments), and with Debian's bcm2711-rpi-4-b.dtb as a Pi's firmware would pass it. Each
time the banner must name what the tree describes (PL011 UART0 at 0xfe201000 through the soc's
ranges, the GIC-400, the timer at the counter's frequency, the PM watchdog, what the VideoCore's
mailbox reports), the clock comes from the launcher (no RTC), timer and UART receive interrupts
arrive, and `poweroff` ends QEMU through the PM watchdog (no PSCI, no semihosting). Then bad
starts: the Pi 5 image on the Pi 4, and a tree without a timer, each end in a panic that says why."""
import datetime
import os
import subprocess
import tempfile
import time

from harness import ROOT, Qemu, check, main

DEBIAN_DTB = os.path.join(ROOT, ".deps", "pi-dtbs", "bcm2711-rpi-4-b.dtb")


def boots(image, dtb, model, reserved):
    started = time.monotonic()
    run_args = ["--dtb", dtb] if dtb else []
    q = Qemu(image, board="rpi4", semihosting=False, append="hz=100", run_args=run_args)
    try:
        m = q.expect(r"Basalt (\S+) \(([0-9a-f]+(?:-dirty)?)\) on (.+) \[(\S+)\]\n", timeout=20)
        banner_ms = (time.monotonic() - started) * 1000
        check(m.group(3) == model and m.group(4) == "rpi4", f"banner: {m.group(0)!r}")
        m = q.expect(r"cpu: (\S+), MPIDR 0x[0-9a-f]+, entered at EL(\d), running at EL(\d)")
        check(m.groups() == ("cortex-a72", "2", "1"), f"cpu line: {m.group(0)}")
        m = q.expect(r"memory: (\d+) MiB in 1 range\(s\), (\d+) reserved; image (\d+) KiB .* at 0x80000;")
        check(m.group(1) == "960" and int(m.group(2)) == reserved, f"memory line: {m.group(0)}")
        m = q.expect(r"irq: (\S+); timer intid (\d+) at (\d+) Hz; uart pl011 @ 0x([0-9a-f]+) intid (\d+); psci (\w+) v0\.0; "
                     r"power via pm watchdog @ 0x([0-9a-f]+)")
        check(m.group(1) == "gicv2", f"interrupt controller {m.group(1)}")
        check(m.group(2) == "30" and m.group(3) == "62500000", f"timer: intid {m.group(2)} at {m.group(3)} Hz (CNTFRQ)")
        check(m.group(4) == "fe201000" and m.group(5) == "153", f"UART0 at 0x{m.group(4)} intid {m.group(5)}")
        check(m.group(6) == "none" and m.group(7) == "fe100000", f"power: psci {m.group(6)}, watchdog 0x{m.group(7)}")
        # UART0 routed to the header pins by the kernel (GPFSEL1 read back from the GPIO model).
        q.expect(r"uart pins: GPIO 14/15 ALT0 \(UART0 on the header\) \(function 4 read back\)")
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
        check("hz=100" in m.group(1) and "clock=" in m.group(1), f"boot arguments: {m.group(1)!r}")
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
        return banner_ms
    finally:
        q.kill()


def refuses(image, dtb, pattern):
    run_args = ["--dtb", dtb] if dtb else []
    q = Qemu(image, board="rpi4", semihosting=True, run_args=run_args)
    try:
        m = q.expect(r"KERNEL PANIC in task '\S+': (.*)\n", timeout=20)
        check(pattern in m.group(1), f"panic says {m.group(1)!r}, not {pattern!r}")
        status = q.wait_exit(timeout=10)
        check(status == 3, f"exit status {status}, expected 3")
        return m.group(1)
    finally:
        q.kill()


def entry_and_text(elf):
    """The ELF's entry point and the bytes at the start of its first loadable segment."""
    out = subprocess.run(["aarch64-linux-gnu-readelf", "-h", "-l", "-W", elf], capture_output=True, text=True, check=True).stdout
    entry = int(out.split("Entry point address:")[1].split()[0], 16)
    load = next(l.split() for l in out.splitlines() if l.strip().startswith("LOAD"))
    return entry, int(load[1], 16), int(load[2], 16)


def test(args):
    kdir = os.path.dirname(args.kernel)
    image = os.path.join(kdir, "kernel8.img")
    size = os.path.getsize(image)
    check(size < 2 << 20, f"kernel8.img is {size} bytes")
    # Both Pi images: linked at 0x80000 (config.txt kernel_address), entered at their first byte,
    # and the raw image is the ELF's memory from there on (what the firmware copies to 0x80000).
    for elf, raw in (("basalt-rpi4.elf", "kernel8.img"), ("basalt-rpi5.elf", "kernel_2712.img")):
        entry, offset, vaddr = entry_and_text(os.path.join(kdir, elf))
        check(entry == 0x80000 and vaddr == 0x80000, f"{elf}: entry 0x{entry:x}, first segment at 0x{vaddr:x}")
        with open(os.path.join(kdir, elf), "rb") as f:
            f.seek(offset)
            head = f.read(256)
        with open(os.path.join(kdir, raw), "rb") as f:
            check(f.read(256) == head, f"{raw} does not start with {elf}'s code at its entry")
    builtin_ms = boots(image, None, "Raspberry Pi 4 Model B (built-in device tree)", 0)
    debian_ms = boots(image, DEBIAN_DTB, "Raspberry Pi 4 Model B", 1)
    print(f"raspi4b: kernel8.img {size} bytes; banner {builtin_ms:.0f} ms after launch with the built-in tree, "
          f"{debian_ms:.0f} ms with Debian's bcm2711-rpi-4-b.dtb; powered off by the PM watchdog")

    refuses(os.path.join(kdir, "kernel_2712.img"), DEBIAN_DTB,
            "this is the rpi5 image (for brcm,bcm2712) but the device tree describes Raspberry Pi 4 Model B: boot kernel8.img instead")
    with tempfile.TemporaryDirectory(prefix="basalt-dtb-") as d:
        source = open(os.path.join(ROOT, "kernel", "board", "rpi4.dts")).read()
        start = source.index("\ttimer {")
        end = source.index("\t};\n", start) + 4
        with open(os.path.join(d, "no-timer.dts"), "w") as f:
            f.write(source[:start] + source[end:])
        subprocess.run(["dtc", "-q", "-I", "dts", "-O", "dtb", "-o", os.path.join(d, "no-timer.dtb"),
                        os.path.join(d, "no-timer.dts")], check=True)
        refuses(image, os.path.join(d, "no-timer.dtb"), "no usable timer node (compatible arm,armv8-timer)")
    print("raspi4b: the Pi 5 image refuses the Pi 4 by name; a tree without a timer ends in a panic naming the node")


if __name__ == "__main__":
    main(test)
