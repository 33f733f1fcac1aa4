#!/usr/bin/env python3
"""Every task of a hung guest: its state, priority, the system call it is blocked in, what it
waits on (the symbol nearest the wait queue) and its call stack, from a memory dump.

  BASALT_QEMU_MONITOR=/tmp/mon.sock qemu/run.sh ...      (or any test that runs run.sh)
  qemu/task_dump.py /tmp/mon.sock [build/kernel/basalt.elf]   (asks that QEMU for a dump)
  qemu/task_dump.py guest.core [build/kernel/basalt.elf]      (a dump taken before)

The kernel runs identity-mapped, so symbol addresses are physical addresses in the dump; the
Task layout comes from the kernel's own basalt_task_layout table (kernel/sched/task_layout.cpp).
Stacks are walked by frame pointers (the kernel keeps them)."""
import bisect
import os
import re
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time

STATES = ["Free", "Ready", "Running", "Blocked", "Sleeping", "Dead"]
MAGIC = 0x7461736B6C61796F
TRAP_X = 0            # TrapFrame: x0..x30, then sp_el0 and elr (kernel/arch/aarch64/trap_frame.h)
TRAP_ELR = 256


class Dump:
    def __init__(self, path):
        with open(path, "rb") as f:
            self.data = f.read()
        if self.data[:4] != b"\x7fELF":
            sys.exit(f"{path}: not an ELF core (QEMU's dump-guest-memory writes one)")
        phoff, = struct.unpack_from("<Q", self.data, 0x20)
        size, count = struct.unpack_from("<HH", self.data, 0x36)
        self.segments = []
        for i in range(count):
            kind, _, offset, _, paddr, filesz = struct.unpack_from("<IIQQQQ", self.data, phoff + i * size)
            if kind == 1:  # PT_LOAD
                self.segments.append((paddr, offset, filesz))

    def read(self, addr, n):
        for base, offset, size in self.segments:
            if base <= addr and addr + n <= base + size:
                return self.data[offset + addr - base:offset + addr - base + n]
        return None

    def u64(self, addr):
        b = self.read(addr, 8)
        return struct.unpack("<Q", b)[0] if b else None


class Kernel:
    def __init__(self, elf):
        self.elf = elf
        out = subprocess.run(["aarch64-linux-gnu-nm", "-C", "-n", elf], capture_output=True, text=True, check=True)
        self.by_name = {}
        self.addrs, self.names = [], []
        for line in out.stdout.splitlines():
            m = re.match(r"([0-9a-f]+) \S (.*)", line)
            if m:
                addr = int(m.group(1), 16)
                self.by_name[m.group(2)] = addr
                self.addrs.append(addr)
                self.names.append(m.group(2))

    def find(self, suffix):
        hits = [a for n, a in self.by_name.items() if n == suffix or n.endswith("::" + suffix)]
        if not hits:
            sys.exit(f"{self.elf}: no symbol {suffix}")
        return hits[0]

    def near(self, addr):
        i = bisect.bisect_right(self.addrs, addr) - 1
        return f"{self.names[i]}+{addr - self.addrs[i]:#x}" if i >= 0 else hex(addr)

    def lines(self, pcs):
        out = subprocess.run(["aarch64-linux-gnu-addr2line", "-f", "-C", "-s", "-e", self.elf] + [hex(p) for p in pcs],
                             capture_output=True, text=True).stdout.splitlines()
        return [f"{out[2 * i][:90]} ({out[2 * i + 1]})" for i in range(len(pcs))]


def dump_through_monitor(sock_path, out_path):
    """Has the QEMU behind the human monitor at sock_path write its guest's memory to out_path."""
    with socket.socket(socket.AF_UNIX) as s:
        s.connect(sock_path)
        s.settimeout(60)
        s.sendall(f"dump-guest-memory {out_path}\n".encode())
        seen = b""
        # The monitor echoes the command, then prints its prompt again once the dump is written.
        while seen.count(b"(qemu)") < 2:
            chunk = s.recv(4096)
            if not chunk:
                break
            seen += chunk
    for _ in range(100):
        if os.path.exists(out_path) and os.path.getsize(out_path) > 0:
            return
        time.sleep(0.1)
    sys.exit(f"QEMU wrote no dump: {seen.decode(errors='replace')[-200:]}")


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    source = sys.argv[1]
    if stat.S_ISSOCK(os.stat(source).st_mode):
        scratch = tempfile.mkdtemp(prefix="basalt-dump.")
        core = os.path.join(scratch, "guest.core")
        try:
            dump_through_monitor(source, core)
            dump = Dump(core)
        finally:
            if os.path.exists(core):
                os.remove(core)
            os.rmdir(scratch)
    else:
        dump = Dump(source)
    kernel = Kernel(sys.argv[2] if len(sys.argv) > 2 else os.path.join(root, "build/kernel/basalt.elf"))
    layout_addr = kernel.find("basalt_task_layout")
    layout = [dump.u64(layout_addr + 8 * i) for i in range(12)]
    if layout[0] != MAGIC:
        sys.exit("the dump's basalt_task_layout is not the kernel's: is this the ELF that ran?")
    size, count, o_id, o_name, o_state, o_prio, o_frame, o_wake, o_switches, o_wait, o_cpu = layout[1:]
    with open(os.path.join(root, "abi/syscalls.def")) as f:
        calls = {int(n): name for n, name in re.findall(r"^SYSCALL\((\d+), (\w+)", f.read(), re.M)}
    tasks = kernel.find("g_tasks")
    current = dump.u64(kernel.find("g_current"))
    for i in range(count):
        t = tasks + i * size
        b = dump.read(t, size)
        state = b[o_state]
        if state == 0:
            continue
        name = b[o_name:o_name + 24].split(b"\0")[0].decode(errors="replace")
        x = struct.unpack_from("<31Q", b, o_frame + TRAP_X)
        elr, = struct.unpack_from("<Q", b, o_frame + TRAP_ELR)
        wait, = struct.unpack_from("<Q", b, o_wait)
        wake, = struct.unpack_from("<Q", b, o_wake)
        switches, = struct.unpack_from("<Q", b, o_switches)
        cpu, = struct.unpack_from("<Q", b, o_cpu)
        id_, = struct.unpack_from("<I", b, o_id)
        print(f"#{id_} {name} {STATES[state] if state < len(STATES) else state} priority {b[o_prio]}"
              f" switches {switches} cpu {cpu / 1e6:.1f} ms" + (f" wake_at {wake}" if wake else "") +
              (" (current)" if t == current else ""))
        if t == current:
            continue  # its frame is stale: the registers are the CPU's (monitor: info registers)
        if wait:
            print(f"    waits on {wait:#x} ({kernel.near(wait)}), in " + calls.get(x[8], f"system call {x[8]}"))
        pcs, fp = [elr], x[29]
        for _ in range(16):
            nxt, lr = dump.u64(fp), dump.u64(fp + 8) if fp else None
            if not fp or nxt is None or lr is None or lr == 0:
                break
            pcs.append(lr)
            fp = nxt
        for line in kernel.lines(pcs):
            print("      " + line)


if __name__ == "__main__":
    main()
