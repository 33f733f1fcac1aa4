#!/usr/bin/env python3
"""Clients that never read, for a minute (issue 21's measurement, on the datagram link): 80
connections each pipeline up to 1,000 anonymous tools/list requests and then hold a zero window,
taking none of the answers; every connection the appliance cuts is opened again at once. Through
the whole minute a client with a good key must get its tools/list answer within 2 s of its SYN,
every time, and ICMP echo must be answered. Before the fixes, answers queued for the silent
connections filled lwIP's heap and new clients timed out."""
import random
import struct
import tempfile
import time

from harness import Qemu, check, main
from test_net_frames import LIST, Segment, http_exchange, mcp_request, ping, resolve_guest, send_tcp, tcp_segment

PORT = 8080
KEY = "flood-test-key-0123456789abcdef"
ATTACKERS = 80
REQUESTS = 1000
DURATION_S = 60.0


class Attacker:
    """One silent client: handshake, then requests as fast as the guest's window takes them."""

    def __init__(self, src, data):
        self.src = src
        self.data = data
        self.iss = random.getrandbits(32)
        self.state = "syn"
        self.peer = 0      # the guest's next sequence number (what we would acknowledge)
        self.acked = 0     # our bytes the guest has acknowledged
        self.sent = 0      # our bytes sent
        self.window = 0    # the guest's advertised window
        self.last_syn = 0.0


class Flood:
    def __init__(self, seg):
        self.seg = seg
        self.attackers = {}
        self.next_src = 30000
        self.cut = 0
        self.frames_sent = 0
        self.data = mcp_request(LIST) * REQUESTS
        # Every frame any helper reads passes through observe() first.
        inner = seg.frames

        def frames(timeout):
            for f in inner(timeout):
                self.observe(f)
                yield f
        seg.frames = frames

    def open(self):
        src = self.next_src
        self.next_src = 30000 + (self.next_src - 30000 + 1) % 20000
        a = Attacker(src, self.data)
        self.attackers[src] = a
        a.last_syn = time.monotonic()
        send_tcp(self.seg, tcp_segment(src, PORT, a.iss, 0, 0x02, window=1460), src)

    def observe(self, f):
        if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
            return
        ihl = (f[14] & 0xF) * 4
        tcp = f[14 + ihl:14 + struct.unpack("!H", f[16:18])[0]]
        sport, dport = struct.unpack("!HH", tcp[0:4])
        a = self.attackers.get(dport)
        if sport != PORT or a is None:
            return
        flags = tcp[13]
        seq, ack = struct.unpack("!II", tcp[4:12])
        window = struct.unpack("!H", tcp[14:16])[0]
        if flags & 0x04:  # cut by the appliance: another takes its place (pump() opens it)
            del self.attackers[dport]
            if a.state == "open":
                self.cut += 1
            return
        if a.state == "syn" and flags & 0x12 == 0x12:
            a.state = "open"
            a.peer = (seq + 1) % 2**32
            a.acked = 0
            a.window = window
            send_tcp(self.seg, tcp_segment(a.src, PORT, (a.iss + 1) % 2**32, a.peer, 0x10, window=0), a.src)
            return
        if a.state != "open" or not flags & 0x10:
            return
        done = (ack - a.iss - 1) % 2**32
        if done <= a.sent:
            a.acked = max(a.acked, done)
        a.window = window
        if len(tcp) > (tcp[12] >> 4) * 4:  # answer bytes (a zero-window probe): acknowledged as a closed window
            send_tcp(self.seg, tcp_segment(a.src, PORT, (a.iss + 1 + a.sent) % 2**32, a.peer, 0x10, window=0), a.src)

    def pump(self):
        """Keeps ATTACKERS connections, opening at most 8 at a time (as a client library would: more
        SYNs at once than the listen backlog holds would evict each other's half-open connections);
        sends what each one's window takes; re-sends lost SYNs."""
        now = time.monotonic()
        opening = sum(1 for a in self.attackers.values() if a.state == "syn")
        while len(self.attackers) < ATTACKERS and opening < 8:
            self.open()
            opening += 1
        for a in list(self.attackers.values()):
            if a.state == "syn":
                if now - a.last_syn > 1.0:
                    a.last_syn = now
                    send_tcp(self.seg, tcp_segment(a.src, PORT, a.iss, 0, 0x02, window=1460), a.src)
                continue
            for _ in range(4):
                room = a.acked + a.window - a.sent
                if room <= 0 or a.sent >= len(a.data):
                    break
                piece = a.data[a.sent:a.sent + min(1400, room)]
                send_tcp(self.seg, tcp_segment(a.src, PORT, (a.iss + 1 + a.sent) % 2**32, a.peer, 0x18, piece, window=0),
                         a.src)
                a.sent += len(piece)
                self.frames_sent += 1


def good_client(seg, src):
    """tools/list with the admin key on a connection of its own; returns seconds from SYN to the
    complete answer, or None."""
    started = time.monotonic()
    body = (b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{'
            b'"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}')
    status, answer = http_exchange(seg, PORT, src, body, key=KEY, full=True)
    if status is None:
        return None
    check(status.startswith("HTTP/1.1 200"), f"the good client got {status!r}")
    check(b'"tools"' in answer, f"the good client's answer lists no tools: {answer[:300]!r}")
    return time.monotonic() - started


def test(args):
    random.seed(0xF100D)
    with tempfile.TemporaryDirectory(prefix="basalt-flood-") as d:
        seg = Segment(d)
        q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append="ip=192.168.50.2/24",
                 run_args=["--net-dgram", f"{seg.qemu_path}:{seg.peer_path}", "--virtio-modern", "--key", f"admin:{KEY}"])
        try:
            q.expect(r"net: vn0 static address 192\.168\.50\.2 ")
            resolve_guest(seg, "flood")
            flood = Flood(seg)
            started = time.monotonic()
            latencies, pings, missed_pings = [], 0, 0
            next_check = started + 1.0
            src = 50000
            while time.monotonic() - started < DURATION_S:
                flood.pump()
                for _ in seg.frames(0.05):
                    pass
                if time.monotonic() >= next_check:
                    took = good_client(seg, src)
                    src += 1
                    check(took is not None and took <= 2.0,
                          f"the good client waited {took if took is None else f'{took:.2f} s'} at "
                          f"{time.monotonic() - started:.0f} s into the flood ({flood.cut} silent connections cut so far)")
                    latencies.append(took)
                    rtt = ping(seg, 0x5151, pings % 65536, b"flood")
                    pings += 1
                    missed_pings += rtt is None
                    check(missed_pings <= 1, f"ICMP echo went unanswered during the flood ({missed_pings} of {pings})")
                    next_check = time.monotonic() + 1.0
            check(flood.cut >= ATTACKERS, f"only {flood.cut} silent connections were cut in a minute")
            q.send("poweroff\n")
            check(q.wait_exit(timeout=20) == 0, "poweroff")
            latencies.sort()
            print(f"{ATTACKERS} silent connections for {DURATION_S:.0f} s ({flood.cut} cut and reopened, "
                  f"{flood.frames_sent} request segments): {len(latencies)} good-key tools/list answers, median "
                  f"{latencies[len(latencies) // 2] * 1000:.0f} ms, worst {latencies[-1] * 1000:.0f} ms; "
                  f"{pings - missed_pings} of {pings} pings answered")
        finally:
            q.kill()


if __name__ == "__main__":
    main(test)
