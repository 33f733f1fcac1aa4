#!/usr/bin/env python3
"""Frame-level scenario: the test is the other host on the guest's Ethernet segment. QEMU
carries the virtio-net NIC's frames as Unix datagrams to this script, which speaks raw
Ethernet: it asks for the guest's MAC by ARP, pings it (ICMP echo through lwIP; one ping of 4000
bytes in three IPv4 fragments, answered in fragments), opens 16 TCP handshakes and checks that the
initial sequence numbers are unpredictable (RFC 6528), sends 40 TCP segments to the echo service
each fragmented so that its first fragment holds only the TCP header (the data then follows an
empty buffer in lwIP's chain) and checks every byte comes back, sends 150 one-byte segments to an
echo that cannot send (pings must still be answered), floods the MCP port with SYNs while real
clients connect (each must be served), has a client pipeline 40 MCP
requests and then keep a zero window (the appliance must cut it while serving others), then throws
runt, oversized, truncated and random frames and a burst larger than the receive ring at it,
and checks that the guest still answers, on the legacy and the modern transport. An lwIP
assertion (injected into the echo service) resets that one connection; the rest goes on."""
import collections
import json
import os
import random
import select
import socket
import struct
import tempfile
import time

from harness import Qemu, check, main

GUEST_IP = bytes([192, 168, 50, 2])
PEER_IP = bytes([192, 168, 50, 1])
PEER_MAC = bytes([0x02, 0x00, 0x00, 0x00, 0x00, 0x01])
GUEST_MAC = bytes([0x52, 0x54, 0x00, 0x12, 0x34, 0x56])  # QEMU's default for the first NIC
BROADCAST = b"\xff" * 6


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return ~total & 0xFFFF


def arp_frame(op, target_mac, target_ip):
    arp = struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, PEER_MAC, PEER_IP, target_mac, target_ip)
    return (BROADCAST if op == 1 else target_mac) + PEER_MAC + b"\x08\x06" + arp


def ipv4_frame(dst_mac, proto, payload, ident=1):
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(payload), ident, 0, 64, proto, 0, PEER_IP, GUEST_IP)
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return dst_mac + PEER_MAC + b"\x08\x00" + header + payload


def icmp_echo(ident, seq, data):
    body = struct.pack("!BBHHH", 8, 0, 0, ident, seq) + data
    return body[:2] + struct.pack("!H", checksum(body)) + body[4:]


class Segment:
    """This script's end of the datagram link."""

    def __init__(self, directory):
        self.qemu_path = os.path.join(directory, "qemu.sock")
        self.peer_path = os.path.join(directory, "peer.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.peer_path)
        self.sock.setblocking(False)
        self.backlog = collections.deque()  # frames taken off the socket while a send waited

    def send(self, frame):
        # QEMU stops reading while the guest's receive ring is full: wait for room (bounded).
        # Meanwhile keep taking the guest's frames, as a host does: a Unix datagram socket queues
        # only net.unix.max_dgram_qlen (10) of them, and a peer that stops reading stalls QEMU's
        # transmit side too.
        deadline = time.monotonic() + 5.0
        while True:
            try:
                self.sock.sendto(frame, self.qemu_path)
                return
            except BlockingIOError:
                check(time.monotonic() < deadline, "QEMU stopped taking frames for 5 s (receive ring stuck?)")
                self.take_waiting()
                time.sleep(0.005)

    def take_waiting(self):
        for _ in range(4096):
            try:
                self.backlog.append(self.sock.recv(65536))
            except BlockingIOError:
                return

    def frames(self, timeout):
        """Yields received frames until timeout; answers the guest's ARP requests for PEER_IP."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return  # what is still in the backlog goes to the next caller, in order
            if not self.backlog:
                ready, _, _ = select.select([self.sock], [], [], remaining)
                if not ready:
                    continue
                self.take_waiting()
                continue
            frame = self.backlog.popleft()
            if len(frame) >= 42 and frame[12:14] == b"\x08\x06" and frame[20:22] == b"\x00\x01" and frame[38:42] == PEER_IP:
                self.send(arp_frame(2, frame[6:12], frame[28:32]))
            yield frame


def resolve_guest(seg, kind):
    seg.send(arp_frame(1, b"\0" * 6, GUEST_IP))
    for f in seg.frames(3.0):
        if len(f) >= 42 and f[12:14] == b"\x08\x06" and f[20:22] == b"\x00\x02" and f[28:32] == GUEST_IP:
            check(f[0:6] == PEER_MAC, f"ARP reply to {f[0:6].hex(':')}")
            check(f[22:28] == GUEST_MAC and f[6:12] == GUEST_MAC, f"ARP reply names {f[22:28].hex(':')}")
            check(f[32:38] == PEER_MAC and f[38:42] == PEER_IP, "ARP reply target fields")
            return
    check(False, f"{kind}: no ARP reply from the guest")


def ping(seg, ident, seq, data):
    """Sends one echo request; returns the round trip in ms, or None without a valid reply."""
    started = time.monotonic()
    seg.send(ipv4_frame(GUEST_MAC, 1, icmp_echo(ident, seq, data), ident=seq))
    for f in seg.frames(2.0):
        if len(f) < 42 or f[12:14] != b"\x08\x00" or f[23] != 1:
            continue
        ihl = (f[14] & 0xF) * 4
        ip, icmp = f[14:14 + ihl], f[14 + ihl:14 + struct.unpack("!H", f[16:18])[0]]
        if icmp[0] != 0 or struct.unpack("!HH", icmp[4:8]) != (ident, seq):
            continue
        check(ip[12:16] == GUEST_IP and ip[16:20] == PEER_IP, "echo reply addresses")
        check(checksum(ip) == 0, "IPv4 header checksum of the reply")
        check(checksum(icmp) == 0, "ICMP checksum of the reply")
        check(icmp[8:] == data, f"echo reply carries {len(icmp) - 8} bytes, not the {len(data)} sent")
        return (time.monotonic() - started) * 1000
    return None


def ipv4_fragments(payload, ident, proto=1, mtu_payload=1480):
    frames = []
    for offset in range(0, len(payload), mtu_payload):
        part = payload[offset:offset + mtu_payload]
        more = offset + mtu_payload < len(payload)
        flags_frag = (0x2000 if more else 0) | (offset // 8)
        header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(part), ident, flags_frag, 64, proto, 0, PEER_IP, GUEST_IP)
        header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
        frames.append(GUEST_MAC + PEER_MAC + b"\x08\x00" + header + part)
    return frames


def fragmented_ping(seg, ident, seq, data):
    """A ping larger than the MTU: the guest must reassemble it and fragment its reply."""
    for frame in ipv4_fragments(icmp_echo(ident, seq, data), ident=0x7000 + seq):
        seg.send(frame)
    parts, total = {}, None
    for f in seg.frames(3.0):
        if len(f) < 34 or f[12:14] != b"\x08\x00" or f[23] != 1 or f[26:30] != GUEST_IP:
            continue
        ip_len, frag = struct.unpack("!H", f[16:18])[0], struct.unpack("!H", f[20:22])[0]
        check(checksum(f[14:34]) == 0, "IPv4 header checksum of a reply fragment")
        offset = (frag & 0x1FFF) * 8
        parts[offset] = f[34:14 + ip_len]
        if not frag & 0x2000:
            total = offset + len(parts[offset])
        if total is not None and sum(len(p) for p in parts.values()) == total:
            icmp = b"".join(parts[o] for o in sorted(parts))
            if icmp[0] == 0 and struct.unpack("!HH", icmp[4:8]) == (ident, seq):
                check(checksum(icmp) == 0, "ICMP checksum of the reassembled reply")
                check(icmp[8:] == data, "reassembled echo reply differs from the request")
                return len(parts)
            parts, total = {}, None
    return 0


def abuse(seg, rng):
    """Frames a driver must survive: every one of these is dropped somewhere, none may wedge it."""
    # (No empty datagram: QEMU's dgram backend takes one as the end of the link and stops reading.)
    seg.send(b"\x01")                                         # one byte
    seg.send(GUEST_MAC + PEER_MAC)                            # no EtherType
    seg.send(GUEST_MAC + PEER_MAC + b"\x08\x00" + b"\x45")    # IPv4 header cut short
    seg.send(GUEST_MAC + PEER_MAC + b"\x08\x06" + b"\0" * 10) # ARP cut short
    seg.send(GUEST_MAC + PEER_MAC + b"\x08\x00" + rng.randbytes(1500))  # full-size garbage IPv4
    seg.send(GUEST_MAC + PEER_MAC + b"\x08\x00" + rng.randbytes(4000))  # larger than a receive buffer
    seg.send(rng.randbytes(9000))                             # jumbo noise
    bad = bytearray(ipv4_frame(GUEST_MAC, 1, icmp_echo(7, 7, b"bad checksum")))
    bad[-1] ^= 0xFF
    seg.send(bytes(bad))                                      # ICMP with a wrong checksum: no reply
    for _ in range(200):                                      # random frames of random sizes
        seg.send(rng.randbytes(rng.randint(1, 1600)))
    for i in range(300):                                      # a burst larger than the 64-buffer ring
        seg.send(ipv4_frame(GUEST_MAC, 17, struct.pack("!HHHH", 1000, 9, 8, 0), ident=i))


def tcp_segment(src_port, dst_port, seq, ack, flags, data=b"", options=b"", window=65535):
    offset = (20 + len(options)) // 4
    header = struct.pack("!HHIIBBHHH", src_port, dst_port, seq, ack, offset << 4, flags, window, 0, 0) + options
    pseudo = PEER_IP + GUEST_IP + struct.pack("!BBH", 0, 6, len(header) + len(data))
    segment = header + data
    return segment[:16] + struct.pack("!H", checksum(pseudo + segment)) + segment[18:]


def send_tcp(seg, segment, ident):
    seg.send(ipv4_frame(GUEST_MAC, 6, segment, ident=ident & 0xFFFF))


def tcp_from_guest(f, port, src):
    """The TCP segment in frame f from the guest's `port` to our `src`, or None."""
    if len(f) < 54 or f[12:14] != b"\x08\x00" or f[23] != 6:
        return None
    ihl = (f[14] & 0xF) * 4
    total = struct.unpack("!H", f[16:18])[0]
    tcp = f[14 + ihl:14 + total]
    if struct.unpack("!HH", tcp[0:4]) != (port, src):
        return None
    return tcp


def handshake(seg, port, src, iss, window=65535):
    """Sends a SYN from `src`; returns the guest's initial sequence number from its SYN-ACK."""
    send_tcp(seg, tcp_segment(src, port, iss, 0, 0x02, window=window), src)
    for f in seg.frames(2.0):
        tcp = tcp_from_guest(f, port, src)
        if tcp is not None and tcp[13] & 0x12 == 0x12:
            isn, ack = struct.unpack("!II", tcp[4:12])
            check(ack == (iss + 1) % 2**32, f"SYN-ACK acknowledges {ack}")
            return isn
    check(False, f"no SYN-ACK from port {port}")


def receive_in_order(seg, port, src, peer, ack_seq, ident, timeout, done, on_segment=None):
    """Takes the guest's bytes on `src`'s connection in sequence from `peer`, acknowledging each
    segment (our own sequence number: ack_seq), until done(bytes so far) or the timeout. Every
    segment from the guest goes to on_segment first. Returns the bytes and the next peer number."""
    got = b""
    for f in seg.frames(timeout):
        tcp = tcp_from_guest(f, port, src)
        if tcp is None:
            continue
        if on_segment:
            on_segment(tcp)
        payload = tcp[(tcp[12] >> 4) * 4:]
        if payload and struct.unpack("!I", tcp[4:8])[0] == peer:
            got += payload
            peer = (peer + len(payload)) % 2**32
            send_tcp(seg, tcp_segment(src, port, ack_seq, peer, 0x10), ident)
        if done(got):
            break
    return got, peer


def http_answer(got):
    """(status line, body) once `got` holds a whole HTTP answer with a Content-Length, else None."""
    head, sep, rest = got.partition(b"\r\n\r\n")
    length = [int(l.split(b":")[1]) for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")]
    if not sep or not length or len(rest) < length[0]:
        return None
    return head.split(b"\r\n")[0].decode(), rest[:length[0]]


def echo_through_header_only_fragments(seg, port, rounds):
    """Connects to the guest's TCP echo, then sends `rounds` segments each split so that the first
    IPv4 fragment carries only the TCP header (24 bytes with 4 bytes of NOP options): after
    reassembly lwIP hands the data over behind an empty first buffer. Returns the bytes echoed."""
    src, iss = 45000, 777000
    peer_seq = handshake(seg, port, src, iss) + 1
    seq = iss + 1
    send_tcp(seg, tcp_segment(src, port, seq, peer_seq, 0x10), 301)
    echoed = b""
    sent = b""
    for i in range(rounds):
        data = bytes([0x41 + i % 26]) * 48
        segment = tcp_segment(src, port, seq, peer_seq, 0x18, data, options=b"\x01\x01\x01\x01")
        for frame in ipv4_fragments(segment, ident=400 + i, proto=6, mtu_payload=24):
            seg.send(frame)
        seq += len(data)
        sent += data
        more, peer_seq = receive_in_order(seg, port, src, peer_seq, seq, 500 + i, 2.0,
                                          lambda got: len(echoed) + len(got) >= len(sent))
        echoed += more
        check(echoed == sent, f"round {i}: {len(echoed)} of {len(sent)} bytes echoed: a header-only first fragment stalled the connection")
    send_tcp(seg, tcp_segment(src, port, seq, peer_seq, 0x04), 399)
    return len(echoed)


def mcp_request(body, key=None):
    """A POST of body; a 2026-07-28 request with its revision and method mirrored in headers, as
    a conforming client sends it."""
    auth = f"Authorization: Bearer {key}\r\n" if key else ""
    message = json.loads(body)
    version = message.get("params", {}).get("_meta", {}).get("io.modelcontextprotocol/protocolVersion")
    mirrored = f"MCP-Protocol-Version: {version}\r\nMcp-Method: {message['method']}\r\n" if version else ""
    return (f"POST /mcp HTTP/1.1\r\nHost: 192.168.50.2\r\nContent-Type: application/json\r\n"
            f"Accept: application/json, text/event-stream\r\n{auth}{mirrored}Content-Length: {len(body)}\r\n\r\n").encode() + body


MODERN = b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}'
LIST = b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{' + MODERN + b'}}'
DISCOVER = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{' + MODERN + b'}}'


def http_exchange(seg, port, src, body, key=None, full=False):
    """One MCP request on a connection of its own, read to the end of its answer; returns the
    answer's status line (or None without a complete answer within 3 s); with full=True, the
    status line and the body."""
    seq = random.getrandbits(31)
    peer = handshake(seg, port, src, seq) + 1
    seq += 1
    request = mcp_request(body, key)
    send_tcp(seg, tcp_segment(src, port, seq, peer, 0x18, request), src)
    seq += len(request)
    got, peer = receive_in_order(seg, port, src, peer, seq, src, 3.0, lambda got: http_answer(got) is not None)
    send_tcp(seg, tcp_segment(src, port, seq, peer, 0x04, window=0), src)
    answer = http_answer(got) or (None, b"")
    return answer if full else answer[0]


def stalled_reader_is_cut(seg, port):
    """A client that pipelines 40 tools/list requests and then advertises a zero window for good,
    taking none of the answers: the appliance must cut it (its send deadline is 10 s) while
    another client on the same address is still served. Returns seconds until the reset."""
    src = 46000
    seq = 900000
    peer = handshake(seg, port, src, seq, window=1460) + 1
    seq += 1
    data = mcp_request(LIST) * 30
    check(len(data) < 8 * 1460, f"{len(data)} bytes of requests must fit the guest's window")
    for off in range(0, len(data), 1400):
        piece = data[off:off + 1400]
        send_tcp(seg, tcp_segment(src, port, seq, peer, 0x18, piece, window=0), off // 1400)
        seq += len(piece)
    started = time.monotonic()
    served = 0
    reset = None
    next_good = started + 1.0
    while time.monotonic() - started < 40 and reset is None:
        if time.monotonic() >= next_good and served < 3:
            line = http_exchange(seg, port, 47000 + served, DISCOVER)
            check(line is not None and line.startswith("HTTP/1.1 200"),
                  f"another client was not served while a reader stalled: {line}")
            served += 1
            next_good = time.monotonic() + 3.0
        for f in seg.frames(0.5):
            tcp = tcp_from_guest(f, port, src)
            if tcp is None:
                continue
            if tcp[13] & 0x04:
                reset = time.monotonic() - started
                break
            # Zero-window probes and whatever else: acknowledged, window still 0.
            send_tcp(seg, tcp_segment(src, port, seq, peer, 0x10, window=0), 7)
    check(reset is not None, "a client that takes no answers for 40 s was never cut")
    check(served >= 3, f"only {served} other clients served meanwhile")
    return reset


def syn_isns(seg, port, count):
    """Opens `count` handshakes to the guest's TCP port from different source ports and returns
    the initial sequence numbers of its SYN-ACKs (each half-open connection is reset after)."""
    isns = []
    for i in range(count):
        src = 40000 + i
        isn = handshake(seg, port, src, 1000 * i)
        isns.append(isn)
        send_tcp(seg, tcp_segment(src, port, 1000 * i + 1, 0, 0x04, window=0), 200 + i)
    return isns


def syn_flood_leaves_room(seg, port, rng):
    """300 SYNs that never complete (a spoofed flood: the SYN-ACKs go unanswered), then three real
    clients, each with more flood SYNs sent while its handshake is half done: every real client
    must be served (the listen backlog of 255 half-open connections evicts its oldest; without it
    the flood fills every connection, with a backlog that only refuses it keeps clients out).
    Returns the number of flood SYNs sent."""
    sent = 0

    def flood(n):
        nonlocal sent
        for _ in range(n):
            src = 20000 + sent % 20000
            send_tcp(seg, tcp_segment(src, port, rng.getrandbits(32), 0, 0x02), sent)
            sent += 1

    flood(300)
    for _ in seg.frames(0.3):  # SYN-ACKs and resets for the flood: not ours to answer
        pass
    for i in range(3):
        src, iss = 48000 + i, 600000 + 1000 * i
        peer = handshake(seg, port, src, iss) + 1
        flood(8)  # the flood goes on while this handshake is half done
        request = mcp_request(DISCOVER)
        send_tcp(seg, tcp_segment(src, port, iss + 1, peer, 0x18, request), src)
        def not_reset(tcp):
            check(not tcp[13] & 0x04, f"real client {i} was reset during the SYN flood")
        got, peer = receive_in_order(seg, port, src, peer, iss + 1 + len(request), src, 3.0,
                                     lambda got: b"\r\n" in got, on_segment=not_reset)
        status = got.split(b"\r\n")[0].decode() if b"\r\n" in got else None
        check(status is not None and status.startswith("HTTP/1.1 200"), f"real client {i} during a SYN flood: {status}")
        send_tcp(seg, tcp_segment(src, port, iss + 1 + len(request), peer, 0x04, window=0), src)
        flood(30)
    return sent


def tiny_segments_keep_the_pool(seg, port):
    """A peer that takes no echo (zero window) and then sends 150 one-byte segments: each would
    hold one of the 64 receive buffers in the echo connection's queue until none were left for any
    frame (pings included). At most 8 may be held; lwIP keeps one more and drops the rest
    unacknowledged. Returns the number of tiny segments sent."""
    src, iss = 49000, 3000000
    peer = handshake(seg, port, src, iss, window=0) + 1
    seq = iss + 1
    for i in range(9):  # 12,600 bytes: the echo's send buffer (11,680) full, the rest queued
        send_tcp(seg, tcp_segment(src, port, seq, peer, 0x18, bytes([0x30 + i]) * 1400, window=0), 700 + i)
        seq += 1400
    for i in range(150):
        send_tcp(seg, tcp_segment(src, port, seq, peer, 0x18, b"x", window=0), 800 + i)
        seq += 1
    for _ in seg.frames(0.3):
        pass
    return src, seq, peer


def assertion_drops_one_connection(seg, port):
    """With fault=lwip_assert the echo service fails a real LWIP_ASSERT on data starting
    LWIP-ASSERT: the kernel must log it and reset that connection alone, and go on serving."""
    src, iss = 49500, 4000000
    peer = handshake(seg, port, src, iss) + 1
    send_tcp(seg, tcp_segment(src, port, iss + 1, peer, 0x18, b"LWIP-ASSERT please"), 990)
    for f in seg.frames(3.0):
        tcp = tcp_from_guest(f, port, src)
        if tcp is not None and tcp[13] & 0x04:
            return True
    return False


def boot(args, modern):
    kind = "modern" if modern else "legacy"
    rng = random.Random(0xBA5A17 + modern)
    with tempfile.TemporaryDirectory(prefix="basalt-net-") as d:
        seg = Segment(d)
        run_args = ["--net-dgram", f"{seg.qemu_path}:{seg.peer_path}"] + (["--virtio-modern"] if modern else [])
        q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append="ip=192.168.50.2/24 tcp_echo=7 fault=lwip_assert",
                 run_args=run_args)
        try:
            q.expect(r"net: vn0 static address 192\.168\.50\.2 netmask 255\.255\.255\.0 gw 0\.0\.0\.0\n")
            resolve_guest(seg, kind)
            times = []
            for seq, size in enumerate((0, 56, 1472)):
                rtt = ping(seg, 0x4242, seq, rng.randbytes(size))
                check(rtt is not None, f"{kind}: no echo reply to a {size}-byte ping")
                times.append(rtt)
            # Initial sequence numbers (RFC 6528): neighbours differ by unpredictable amounts, not
            # by the few ticks of lwIP's own counter.
            isns = syn_isns(seg, 8080, 16)
            check(len(isns) == 16, f"{kind}: {len(isns)} of 16 SYN-ACKs from the MCP port")
            deltas = [(b - a) % 2**32 for a, b in zip(isns, isns[1:])]
            spread = sum(1 for d in deltas if 2**24 <= d <= 2**32 - 2**24)
            check(spread >= 12, f"{kind}: initial sequence numbers look predictable: deltas {deltas}")
            check(assertion_drops_one_connection(seg, 7), f"{kind}: the connection that failed an lwIP assertion was not reset")
            q.expect(r"lwip: assertion \"fault injection: deliberate lwIP assertion in the echo service\" failed at "
                     r"tcp_echo\.cpp:\d+ \(1 so far\); the connection is dropped")
            echoed = echo_through_header_only_fragments(seg, 7, 40)
            tiny_src, tiny_seq, tiny_peer = tiny_segments_keep_the_pool(seg, 7)
            for seq in range(30, 33):
                check(ping(seg, 0x4242, seq, rng.randbytes(64)) is not None,
                      f"{kind}: one connection's tiny segments emptied the receive pool (no echo reply)")
            send_tcp(seg, tcp_segment(tiny_src, 7, tiny_seq, tiny_peer, 0x04, window=0), 899)
            flood = syn_flood_leaves_room(seg, 8080, rng)
            check(ping(seg, 0x4242, 40, rng.randbytes(64)) is not None, f"{kind}: no echo reply after the SYN flood")
            cut_after = stalled_reader_is_cut(seg, 8080)
            pieces = fragmented_ping(seg, 0x4242, 5, rng.randbytes(4000))
            check(pieces >= 3, f"{kind}: no reassembled reply to a 4000-byte ping in 3 fragments")
            abuse(seg, rng)
            for f in seg.frames(1.0):  # the reply to the bad-checksum ping must never come
                check(not (len(f) > 42 and f[12:14] == b"\x08\x00" and f[23] == 1 and f[34] == 0
                           and f[38:42] == b"\x00\x07\x00\x07"), "the guest answered an ICMP echo with a bad checksum")
            for seq in range(10, 20):
                rtt = ping(seg, 0x4242, seq, rng.randbytes(64))
                check(rtt is not None, f"{kind}: the guest stopped answering after the abuse (ping {seq})")
                times.append(rtt)
            q.send("net\n")
            m = q.expect(r"virtio-net v(\d) @ 0x[0-9a-f]+ mac [0-9a-f:]+: rx (\d+) frames \((\d+) dropped\), "
                         r"tx (\d+) frames \((\d+) ring full\), irqs (\d+), device errors (\d+)\n")
            rx, dropped, tx, irqs, errors = (int(m.group(i)) for i in (2, 3, 4, 6, 7))
            check(m.group(1) == ("2" if modern else "1"), f"transport version {m.group(1)}")
            check(rx >= 500, f"only {rx} frames received")
            check(tx >= 14, f"only {tx} frames sent")
            check(errors == 0, f"{errors} used-ring entries rejected from an honest device")
            check(0 < irqs <= rx + tx, f"{irqs} interrupts for {rx + tx} frames")
            q.send("poweroff\n")
            check(q.wait_exit(timeout=10) == 0, "poweroff")
            print(f"{kind}: driver counters: {m.group(0).strip()}")
            print(f"{kind}: a reader stalled behind a zero window was cut after {cut_after:.1f} s while others were served")
            print(f"{kind}: 3 real clients served through a flood of {flood} SYNs; 150 one-byte segments to a "
                  f"stalled echo left the receive pool to the pings")
            print(f"{kind}: ARP, ICMP echo and a 4000-byte fragmented ping ok before and after {8 + 200 + 300} hostile or bulk frames; "
                  f"ping median {sorted(times)[len(times) // 2]:.2f} ms")
        finally:
            q.kill()


def test(args):
    boot(args, modern=False)
    boot(args, modern=True)


if __name__ == "__main__":
    main(test)
