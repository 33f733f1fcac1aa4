#!/usr/bin/env python3
"""basalt-fabric (qemu/swarm/fabric_main.cpp), the swarm's network, with this script playing the
nodes on their datagram sockets as QEMU's `-netdev dgram` would: a broadcast reaches every other
node; a learned unicast reaches its node only; with a link down the frame goes around; a partition
cuts the groups apart and heal joins them; a link's delay holds frames back at least that long;
the counters see the traffic; bad control commands are refused; on SIGTERM it ends and leaves no
socket behind. Usage: fabric_daemon_test.py FABRIC_BINARY"""
import os
import shutil
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "qemu", "swarm"))
from fabric_control import FabricControl  # noqa: E402


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def check(condition, message):
    if not condition:
        fail(message)


def mac(n):
    return bytes([0x52, 0x54, 0x00, 0x12, 0x00, n])


BROADCAST = b"\xff" * 6


def frame(dst, src, tag):
    return dst + src + b"\x88\xb5" + tag.encode().ljust(46, b"\0")


class Node:
    def __init__(self, d, n):
        self.n = n
        self.path = os.path.join(d, f"node-{n}.sock")
        self.fabric = os.path.join(d, f"fabric-{n}.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)

    def send(self, f):
        self.sock.sendto(f, self.fabric)

    def received(self, timeout=0.3):
        got = []
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.sock], [], [], max(0, deadline - time.monotonic()))
            if ready:
                got.append(self.sock.recv(65536))
        return got


def tags(frames):
    return sorted(f[14:].rstrip(b"\0").decode() for f in frames)


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="basalt-fabric-") as d:
        fabric = subprocess.Popen([binary, "--dir", d, "--nodes", "4", "--topology", "mesh", "--seed", "5"],
                                  stderr=subprocess.PIPE)
        try:
            line = fabric.stderr.readline().decode()
            check("ready" in line, f"the fabric did not start: {line!r}")
            nodes = [Node(d, n) for n in range(4)]
            cmd = FabricControl(os.path.join(d, "control.sock"))

            nodes[0].send(frame(BROADCAST, mac(0), "hello-all"))
            for n in (1, 2, 3):
                check(tags(nodes[n].received()) == ["hello-all"], f"node {n} missed the broadcast")
            nodes[2].send(frame(mac(0), mac(2), "to-zero"))
            check(tags(nodes[0].received()) == ["to-zero"], "node 0 missed its unicast")
            check(nodes[1].received(0.1) == [] and nodes[3].received(0.1) == [], "a learned unicast was flooded")

            check(cmd(cmd="link", a=0, b=2, state="down")["ok"], "link down")
            nodes[2].send(frame(mac(0), mac(2), "around"))
            check(tags(nodes[0].received()) == ["around"], "with 0-2 down the frame did not go around")

            check(cmd(cmd="partition", groups=[[0, 1], [2, 3]])["ok"], "partition")
            nodes[0].send(frame(BROADCAST, mac(0), "cut"))
            check(tags(nodes[1].received()) == ["cut"], "node 1 is on node 0's side")
            check(nodes[2].received(0.2) == [] and nodes[3].received(0.2) == [], "the partition let a frame through")
            check(cmd(cmd="heal")["ok"], "heal")
            nodes[0].send(frame(BROADCAST, mac(0), "healed"))
            check(tags(nodes[3].received()) == ["healed"], "heal did not join the sides")
            check(cmd(cmd="stats")["links"][1]["up"] is False, "heal brought back a link set down by hand")

            check(cmd(cmd="link", a=1, b=3, delay_ms=200)["ok"], "delay")
            started = time.monotonic()
            nodes[1].send(frame(mac(3), mac(1), "slow"))
            got = nodes[3].received(1.0)
            check(tags(got) == ["slow"], "the delayed frame never arrived")
            check(time.monotonic() - started >= 0.2, "the frame came before its link's delay")

            stats = cmd(cmd="stats")
            check(stats["delivered"] >= 10 and sum(l["frames"] for l in stats["links"]) >= 10, f"stats: {stats}")
            for bad in ({"cmd": "link", "a": 0, "b": 9}, {"cmd": "link", "a": 0, "b": 1, "loss": 2},
                        {"cmd": "partition", "groups": [[0, 1, 2, 3]]}, {"cmd": "reboot"}, {"nocmd": 1}):
                check(cmd(**bad)["ok"] is False, f"{bad} was accepted")
            check(cmd.send_raw(b"not json\n")["ok"] is False, "garbage was accepted")

            fabric.send_signal(signal.SIGTERM)
            check(fabric.wait(timeout=5) == 0, "the fabric did not end on SIGTERM")
            left = [f for f in os.listdir(d) if f.startswith(("fabric-", "control"))]
            check(left == [], f"sockets left behind: {left}")
        finally:
            if fabric.poll() is None:
                fabric.kill()
                fabric.wait()
    print("PASS fabric_daemon_test: broadcast, learned unicast, detour, partition and heal, delay, counters, refusals, clean exit")


def big_stats(binary):
    """A 64-node mesh's stats (2,016 links, some 300 KB) arrive whole: more than a socket buffer."""
    d = tempfile.mkdtemp(prefix="fabric64-")
    p = subprocess.Popen([binary, "--dir", d, "--nodes", "64", "--topology", "mesh"], stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            if os.path.exists(os.path.join(d, "control.sock")):
                break
            time.sleep(0.05)
        control = FabricControl(os.path.join(d, "control.sock"))
        stats = control(cmd="stats")
        check(len(stats["links"]) == 2016 and len(stats["node_states"]) == 64, "a 64-node mesh's stats, whole")
        control.close()
    finally:
        p.terminate()
        p.wait(timeout=10)
        shutil.rmtree(d, ignore_errors=True)
    print("PASS fabric_daemon_test: a 64-node mesh's stats (2,016 links) through the control socket")


if __name__ == "__main__":
    main()
    big_stats(sys.argv[1])
