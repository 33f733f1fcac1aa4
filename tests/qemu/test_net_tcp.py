#!/usr/bin/env python3
"""TCP/IP scenario through lwIP: the guest configures its interface (DHCP from QEMU's user
network, or the static `ip=` boot argument), listens with the TCP echo service, and the host
connects through a QEMU port forward: payloads of one byte to 4 MiB must come back intact
(the larger ones only through TCP flow control, as the echo keeps at most one window), four
connections at once are served and a fifth is refused. The kernel must still idle in WFI with
the stack's timers running. DHCP runs on the legacy virtio transport, the static address on
the modern one."""
import os
import socket
import threading
import time

from harness import Qemu, TestFailure, check, main

GUEST_PORT = 7777
IDLE_LIMIT = 0.10  # share of one host core, as test_idle.py


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def connect(port, timeout=5.0):
    # slirp accepts on the host side before the guest answers; retry while the guest boots.
    deadline = time.monotonic() + timeout
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=timeout)
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def echo(sock, payload):
    # Send from a thread: a payload larger than the socket buffers plus the guest's window only
    # comes back while it is still being sent.
    sender = threading.Thread(target=sock.sendall, args=(payload,), daemon=True)
    sender.start()
    got = bytearray()
    while len(got) < len(payload):
        chunk = sock.recv(65536)
        if not chunk:
            break
        got += chunk
    sender.join(timeout=5.0)
    return bytes(got)


def refused(sock):
    """True when the connection is closed or reset without echoing anything."""
    try:
        sock.sendall(b"x")
        return sock.recv(16) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def exercise(q, port):
    rate = 0.0
    for size in (1, 1460, 1461, 65536, 4 << 20):
        payload = os.urandom(size)
        with connect(port) as s:
            started = time.monotonic()
            got = echo(s, payload)
            rate = size / (time.monotonic() - started)
        check(got == payload, f"{size}-byte echo came back as {len(got)} bytes"
              + (" (differing)" if len(got) == size else ""))
    conns = [connect(port) for _ in range(4)]
    try:
        for i, s in enumerate(conns):
            check(echo(s, f"conn {i}\n".encode()) == f"conn {i}\n".encode(), f"concurrent connection {i}")
        with connect(port) as fifth:
            fifth.settimeout(3.0)
            check(refused(fifth), "a fifth concurrent connection was served (limit 4)")
    finally:
        for s in conns:
            s.close()
    # The slots come back: a new connection works once the four are closed.
    time.sleep(0.5)
    with connect(port) as s:
        check(echo(s, b"again\n") == b"again\n", "echo after the concurrent connections closed")
    return rate


def idle_share(q):
    time.sleep(0.5)
    c0, t0 = q.cpu_seconds(), time.monotonic()
    time.sleep(2.0)
    c1, t1 = q.cpu_seconds(), time.monotonic()
    return (c1 - c0) / (t1 - t0)


def boot(args, modern, ip_arg):
    port = free_port()
    run_args = ["--hostfwd", f"127.0.0.1:{port}:{GUEST_PORT}"] + (["--virtio-modern"] if modern else [])
    append = f"tcp_echo={GUEST_PORT}" + (f" ip={ip_arg}" if ip_arg else "")
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append=append, run_args=run_args)
    try:
        if ip_arg:  # set before the services start, so logged first
            q.expect(r"net: vn0 static address 10\.0\.2\.15 netmask 255\.255\.255\.0 gw 10\.0\.2\.2\n")
        q.expect(rf"net: tcp echo listening on port {GUEST_PORT}")
        if not ip_arg:
            m = q.expect(r"net: vn0 dhcp lease ([\d.]+) netmask ([\d.]+) gw ([\d.]+) from server ([\d.]+), (\d+) s", timeout=15)
            check(m.groups()[:4] == ("10.0.2.15", "255.255.255.0", "10.0.2.2", "10.0.2.2"), f"lease {m.group(0)}")
            check(int(m.group(5)) > 0, "lease without a lifetime")
            lease = int(m.group(5))
            print(f"dhcp: {m.group(0)}")
        # The shell sees the interface only through the net task's published status. The boot's
        # last log line first: one printed while the shell answers would split its line.
        deadline = time.monotonic() + 10
        while "mcp: http: serving /mcp" not in q.output and time.monotonic() < deadline:
            q._read_some(0.1)
        q.send("net\n")
        # The lease as logged: QEMU's own user network leases for a day, passt for ever (2^32-1 s).
        want = "(static)" if ip_arg else f"(dhcp, lease {lease} s)"
        m = q.expect(r"vn0: (.*)\n")
        check(m.group(1) == f"10.0.2.15 netmask 255.255.255.0 gw 10.0.2.2 {want}", f"shell net: {m.group(0)}")
        rate = exercise(q, port)
        share = idle_share(q)
        print(f"{'modern' if modern else 'legacy'}: echo ok, 4 MiB echoed at {rate / 1e6:.1f} MB/s each way; "
              f"idle CPU share with the stack up {share * 100:.1f}%")
        check(share < IDLE_LIMIT, f"idle kernel with the network up uses {share * 100:.1f}% of a core")
        q.send("poweroff\n")
        check(q.wait_exit(timeout=10) == 0, "poweroff")
    except OSError as e:
        raise TestFailure(f"host socket: {e}; output tail:\n" + q.output[-3000:])
    finally:
        q.kill()


def test(args):
    boot(args, modern=False, ip_arg=None)
    boot(args, modern=True, ip_arg="10.0.2.15/24,gw=10.0.2.2")


if __name__ == "__main__":
    main(test)
