#!/usr/bin/env python3
"""Two Basalt nodes on QEMU virt wired through basalt-fabric (qemu/swarm): each node's NIC is a
`-netdev dgram` whose remote is its fabric port. With static addresses and the TCP echo service,
the lwIP stacks' own traffic (gratuitous ARP at start, then ARP for each other) crosses the fabric
both ways: each node's driver counts received frames, and the fabric's counters show the link
carried them. Cut the link and the counters stop growing. The fabric and both QEMUs end with the
test."""
import os
import signal
import sys
import subprocess
import tempfile
import time

from harness import ROOT, Qemu, check, main

sys.path.insert(0, os.path.join(ROOT, "qemu", "swarm"))
from fabric_control import FabricControl  # noqa: E402


def node_rx(q):
    q.send("net\n")
    m = q.expect(r"virtio-net v\d @ 0x[0-9a-f]+ mac [0-9a-f:]+: rx (\d+) frames")
    return int(m.group(1))


def test(args):
    fabric_bin = os.path.join(ROOT, "build", "host", "qemu", "swarm", "basalt-fabric")
    check(os.path.exists(fabric_bin), f"no {fabric_bin} (./basalt build)")
    with tempfile.TemporaryDirectory(prefix="basalt-swarm-") as d:
        fabric = subprocess.Popen([fabric_bin, "--dir", d, "--nodes", "2", "--topology", "line", "--seed", "1"],
                                  stderr=subprocess.PIPE)
        nodes = []
        try:
            check(b"ready" in fabric.stderr.readline(), "the fabric did not start")
            for n in range(2):
                nodes.append(Qemu(args.kernel, cpu=args.cpu, gic=args.gic, append=f"ip=10.9.0.{n + 1}/24 tcp_echo=7",
                                  run_args=["--net-dgram", f"{d}/node-{n}.sock:{d}/fabric-{n}.sock"]))
            for q in nodes:
                q.expect(r"net: vn0 static address 10\.9\.0\.\d ", timeout=20)
                q.expect(r"basalt> ", timeout=10)
            cmd = FabricControl(os.path.join(d, "control.sock"))

            # Each stack announces itself (gratuitous ARP) when its interface comes up: the other
            # node hears it through the fabric, whichever booted first.
            deadline = time.monotonic() + 10
            while time.monotonic() < deadline and min(node_rx(q) for q in nodes) == 0:
                time.sleep(0.2)
            rx = [node_rx(q) for q in nodes]
            check(min(rx) > 0, f"frames received by the nodes: {rx}")
            link = cmd(cmd="stats")["links"][0]
            check(link["frames"] >= 2, f"the fabric's link carried {link['frames']} frames")
            check(cmd(cmd="link", a=0, b=1, state="down")["ok"], "link down")
            before = cmd(cmd="stats")["links"][0]["frames"]
            for q in nodes:
                q.send("poweroff\n")
                check(q.wait_exit(timeout=10) == 0, "poweroff")
            after = cmd(cmd="stats")["links"][0]["frames"]
            check(after == before, f"frames crossed a cut link: {before} -> {after}")
            fabric.send_signal(signal.SIGTERM)
            check(fabric.wait(timeout=5) == 0, "the fabric did not end")
        finally:
            for q in nodes:
                q.kill()
            if fabric.poll() is None:
                fabric.kill()
                fabric.wait()
    print(f"swarm fabric: two nodes exchanged frames through basalt-fabric (node rx {rx}, link {link['frames']} frames); "
          "a cut link carried none")


if __name__ == "__main__":
    main(test)
