#!/usr/bin/env python3
"""The swarm fabric's own cost (build/tools basalt-fabric, a mesh of N nodes played by this script
on the nodes' datagram sockets, as QEMU's `-netdev dgram` would): the round trip of a unicast frame
through the fabric against the same ping-pong between two sockets directly (the difference, halved,
is what the fabric adds per frame), unicast frames/s it carries, and broadcast deliveries/s (one
frame in, N-1 out). The script's own sending and receiving are in the figures, so they are lower
bounds on what the fabric can do.

  python3 tests/bench/fabric_bench.py [--nodes 48] [--seconds 2]
"""
import argparse
import os
import selectors
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FABRIC = os.path.join(ROOT, "build", "tools", "qemu", "swarm", "basalt-fabric")
BROADCAST = b"\xff" * 6


def mac(n):
    return bytes([0x52, 0x54, 0x00, 0x12, n >> 8, n & 0xff])


def frame(dst, src, size=1000):
    return dst + src + b"\x88\xb5" + bytes(size - 14)


class Node:
    def __init__(self, d, n):
        self.n = n
        self.fabric = os.path.join(d, f"fabric-{n}.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
        self.sock.bind(os.path.join(d, f"node-{n}.sock"))

    def send(self, f):
        self.sock.sendto(f, self.fabric)


def ping_pong(send_a, sock_a, send_b, sock_b, rounds):
    """Median round trip: a sends, b answers, a receives (blocking sockets)."""
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        send_a()
        sock_b.recv(65536)
        send_b()
        sock_a.recv(65536)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


class Counter(threading.Thread):
    """Drains the given sockets, counting frames, until stopped."""

    def __init__(self, socks):
        super().__init__(daemon=True)
        self.sel = selectors.DefaultSelector()
        for s in socks:
            s.setblocking(False)
            self.sel.register(s, selectors.EVENT_READ)
        self.count = 0
        self.stop = False

    def run(self):
        while not self.stop:
            for key, _ in self.sel.select(0.1):
                try:
                    while True:
                        key.fileobj.recv(65536)
                        self.count += 1
                except BlockingIOError:
                    pass


def flood(sender, f, seconds, counter):
    """Sends f as fast as the socket takes it for `seconds`; frames delivered per second."""
    sender.sock.setblocking(True)
    start = counter.count
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for _ in range(64):
            sender.send(f)
    time.sleep(0.3)  # what is still in flight arrives
    return (counter.count - start) / seconds


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--nodes", type=int, default=48)
    p.add_argument("--seconds", type=float, default=2)
    args = p.parse_args()
    if not os.path.exists(FABRIC):
        sys.exit(f"no fabric at {FABRIC} (./basalt build)")
    with tempfile.TemporaryDirectory(prefix="basalt-fabric-bench-") as d:
        nodes = [Node(d, n) for n in range(args.nodes)]
        fabric = subprocess.Popen([FABRIC, "--dir", d, "--nodes", str(args.nodes), "--topology", "mesh", "--seed", "1"],
                                  stderr=subprocess.PIPE)
        try:
            if b"ready" not in fabric.stderr.readline():
                sys.exit("the fabric did not start")
            a, b = nodes[0], nodes[1]
            # Each announces itself once so the fabric learns where its address lives.
            for n in (a, b):
                n.send(frame(BROADCAST, mac(n.n), 60))
            time.sleep(0.2)
            for n in nodes:
                n.sock.setblocking(False)
                try:
                    while True:
                        n.sock.recv(65536)
                except BlockingIOError:
                    pass
                n.sock.setblocking(True)

            rounds = 2000
            to_b, to_a = frame(mac(1), mac(0), 100), frame(mac(0), mac(1), 100)
            through = ping_pong(lambda: a.send(to_b), a.sock, lambda: b.send(to_a), b.sock, rounds)
            pa, pb = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
            direct = ping_pong(lambda: pa.send(to_b), pa, lambda: pb.send(to_a), pb, rounds)
            print(f"mesh of {args.nodes}: round trip through the fabric {through * 1e6:.0f} us, directly "
                  f"{direct * 1e6:.0f} us: the fabric adds {(through - direct) / 2 * 1e6:.0f} us per frame (median of {rounds})")

            counter = Counter([n.sock for n in nodes[1:]])
            counter.start()
            unicast = flood(a, frame(mac(1), mac(0)), args.seconds, counter)
            print(f"unicast, 1000-byte frames: {unicast:,.0f} frames/s delivered")
            broadcast = flood(a, frame(BROADCAST, mac(0)), args.seconds, counter)
            print(f"broadcast to {args.nodes - 1}: {broadcast:,.0f} deliveries/s ({broadcast / (args.nodes - 1):,.0f} frames in/s)")
            counter.stop = True
        finally:
            fabric.terminate()
            fabric.wait()


if __name__ == "__main__":
    main()
