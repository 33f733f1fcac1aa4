#!/usr/bin/env python3
"""basalt-fabric (qemu/swarm/fabric_main.cpp), the swarm's network, with this script playing the
nodes on their datagram sockets as QEMU's `-netdev dgram` would: a broadcast reaches every other
node; a learned unicast reaches its node only; with a link down the frame goes around; a partition
cuts the groups apart and heal joins them; a link's delay holds frames back at least that long;
a burst to a node that does not read arrives whole and in order; the counters see the traffic; bad control commands are refused; on SIGTERM it ends and leaves no
socket behind. With --udp, nodes attached over UDP (as a QEMU on another machine would be) and
over unix sockets reach each other, and a node's UDP port heeds only the source it is bound to. Usage: fabric_daemon_test.py FABRIC_BINARY"""
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

            # A node that does not read for a while (its QEMU waiting for a core): its socket holds
            # only a few datagrams (net.unix.max_dgram_qlen); the fabric holds the rest, in order.
            nodes[0].received(0.1)  # (the delayed frame to a node not yet learned was flooded here too)
            burst = [f"burst-{i:03d}" for i in range(60)]
            for t in burst:
                nodes[2].send(frame(mac(0), mac(2), t))
            time.sleep(0.3)
            got = [f[14:].rstrip(b"\0").decode() for f in nodes[0].received(1.0)]
            check(got == burst, f"a burst to a node that did not read lost frames or their order: {len(got)} of 60")
            check(cmd(cmd="stats")["backlog_dropped"] == 0, "frames dropped from a backlog")

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
    print("PASS fabric_daemon_test: broadcast, learned unicast, detour, partition and heal, delay, a burst held for a busy node, counters, refusals, clean exit")


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


def free_udp_base(count):
    """A base port with `count` free UDP ports on 127.0.0.1 above it (held for a moment only)."""
    for _ in range(50):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.bind(("127.0.0.1", 0))
        base = probe.getsockname()[1]
        probe.close()
        if base + count > 65535:
            continue
        held = []
        try:
            for port in range(base, base + count):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    fail("no run of free UDP ports")


class UdpNode:
    """A node whose QEMU would use `-netdev dgram,remote.type=inet`: its own UDP port, the fabric's."""

    def __init__(self, base, n):
        self.fabric = ("127.0.0.1", base + n)
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]

    send = Node.send
    received = Node.received


def udp_ports(binary):
    base = free_udp_base(3)
    d = tempfile.mkdtemp(prefix="fabric-udp-")
    p = subprocess.Popen([binary, "--dir", d, "--nodes", "3", "--topology", "line", "--udp", f"127.0.0.1:{base}"],
                         stderr=subprocess.PIPE)
    try:
        line = p.stderr.readline().decode()
        check("ready" in line, f"the fabric with UDP ports did not start: {line!r}")
        local = Node(d, 0)
        far = [None, UdpNode(base, 1), UdpNode(base, 2)]
        far[2].send(frame(BROADCAST, mac(2), "from-2"))  # heard by node 0; node 1 has not shown up yet
        check(tags(local.received()) == ["from-2"], "a UDP node's broadcast did not reach the unix node")
        far[1].send(frame(BROADCAST, mac(1), "from-1"))
        check(tags(local.received()) == ["from-1"] and tags(far[2].received()) == ["from-1"],
              "a UDP node's broadcast did not reach both the unix and the UDP node")
        local.send(frame(mac(2), mac(0), "to-2"))  # across node 1, to a learned UDP node
        check(tags(far[2].received()) == ["to-2"] and far[1].received(0.1) == [], "a unicast to a UDP node")
        control = FabricControl(os.path.join(d, "control.sock"))
        ports = control(cmd="stats")["node_ports"]
        check(ports == ["unix", f"udp 127.0.0.1:{far[1].port}", f"udp 127.0.0.1:{far[2].port}"], f"node_ports: {ports}")
        # Node 2's port is bound to node 2's first source: an impostor sending there (as node 2,
        # or as anyone) is not heard, and does not take node 2's traffic.
        impostor = UdpNode(base, 2)
        impostor.send(frame(BROADCAST, mac(2), "impostor"))
        impostor.send(frame(BROADCAST, mac(7), "impostor"))
        check(local.received() == [] and far[1].received(0.1) == [], "an impostor on a bound UDP port was heard")
        local.send(frame(mac(2), mac(0), "still-2"))
        check(tags(far[2].received()) == ["still-2"] and impostor.received(0.1) == [],
              "the impostor took node 2's traffic")
        stats = control(cmd="stats")
        check(stats["node_udp_refused"] == [0, 0, 2], f"node_udp_refused: {stats['node_udp_refused']}")
        check(stats["node_ports"][2] == f"udp 127.0.0.1:{far[2].port}", "the binding moved")
        # Set down (killed), the port is free for the node's restart, from wherever it comes.
        check(control(cmd="node", n=2, state="down").get("ok"), "node 2 down")
        check(control(cmd="node", n=2, state="up").get("ok"), "node 2 up")
        restarted = UdpNode(base, 2)
        restarted.send(frame(BROADCAST, mac(2), "restarted"))
        check(tags(local.received()) == ["restarted"], "a restarted node 2 could not bind its port again")
        far[2].send(frame(BROADCAST, mac(2), "old-2"))
        check(local.received() == [], "the old source was heard after the restart bound the port")
        control.close()
    finally:
        p.terminate()
        p.wait(timeout=10)
        shutil.rmtree(d, ignore_errors=True)
    for bad in ("127.0.0.1", "nohost:5000", "127.0.0.1:0", "127.0.0.1:70000"):
        r = subprocess.run([binary, "--dir", "/nonexistent", "--nodes", "2", "--topology", "line", "--udp", bad],
                           capture_output=True, text=True, timeout=10)
        check(r.returncode == 2 and "--udp wants HOST:BASE" in r.stderr, f"--udp {bad}: {r.returncode} {r.stderr}")
    taken = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    taken.bind(("127.0.0.1", 0))
    d = tempfile.mkdtemp(prefix="fabric-udp-")
    try:
        r = subprocess.run([binary, "--dir", d, "--nodes", "2", "--topology", "line", "--udp",
                            f"127.0.0.1:{taken.getsockname()[1]}"], capture_output=True, text=True, timeout=10)
        check(r.returncode == 1 and "cannot bind UDP port" in r.stderr and not os.listdir(d),
              f"a UDP port in use: {r.returncode} {r.stderr} {os.listdir(d)}")
    finally:
        taken.close()
        shutil.rmtree(d, ignore_errors=True)
    print("PASS fabric_daemon_test: UDP ports (a unix node and two UDP nodes reach each other; node_ports shows how "
          "each is attached); a bad --udp or a port in use refused, nothing left behind")


if __name__ == "__main__":
    main()
    big_stats(sys.argv[1])
    udp_ports(sys.argv[1])
