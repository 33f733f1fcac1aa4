#!/usr/bin/env python3
"""SNTP: with `ntp=10.0.2.2:PORT` the kernel asks this script (a small SNTP server on the host,
reached through QEMU's user network) for the time, and sets its clock from the answer: here a
time a year ahead of the host's, so that the RTC cannot pass for it. The first answer to each
request is forged (it does not echo the request's transmit time, as an off-path attacker's could
not): it must be ignored. `date` then shows the server's year, and the clock's source is sntp."""
import datetime
import select
import socket
import struct
import time

from harness import Qemu, check, main

NTP_EPOCH = 2208988800  # seconds from 1900 to 1970
AHEAD = 365 * 86400


def ntp_answer(request, unix_time, originate=None):
    ts = struct.pack("!II", int(unix_time) + NTP_EPOCH, int((unix_time % 1) * 2**32))
    origin = originate if originate is not None else request[40:48]
    # LI 0, version 4, mode 4 (server); stratum 2; poll 6; precision -20; root delay/dispersion 0;
    # reference id; reference, originate, receive and transmit timestamps.
    return struct.pack("!BBbb", (4 << 3) | 4, 2, 6, -20) + b"\0" * 8 + b"TEST" + ts + origin + ts + ts


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test(args):
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    port = server.getsockname()[1]
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, append=f"ntp=10.0.2.2:{port}",
             run_args=["--hostfwd", f"{free_port()}:8080"])
    try:
        q.expect(r"sntp: asking 10\.0\.2\.2:\d+ for the time", timeout=20)
        deadline = time.monotonic() + 30
        answered = forged = 0
        while time.monotonic() < deadline and answered == 0:
            ready, _, _ = select.select([server], [], [], 0.2)
            if not ready:
                continue
            request, peer = server.recvfrom(512)
            check(len(request) >= 48 and request[0] & 7 == 3, f"not an SNTP client request: {request[:4].hex()}")
            # Forged first: a believable time, but not echoing the request.
            server.sendto(ntp_answer(request, time.time() - AHEAD, originate=b"\x12" * 8), peer)
            forged += 1
            server.sendto(ntp_answer(request, time.time() + AHEAD), peer)
            answered += 1
        check(answered, "the kernel never asked for the time")
        m = q.expect(r"sntp: clock set to (\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ) \(it was (-?\d+) s off\)", timeout=10)
        set_to = datetime.datetime.strptime(m.group(1), "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=datetime.timezone.utc)
        expected = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=AHEAD)
        check(abs((set_to - expected).total_seconds()) < 30, f"clock set to {set_to}, expected about {expected}")
        check(abs(int(m.group(2)) - AHEAD) < 30, f"the RTC was {m.group(2)} s away from the server, expected {AHEAD}")
        check("sntp: the server's time" not in q.output, "the forged answer was looked at as a time")
        q.find(r"basalt> ")  # the shell is up (its prompt may come before or after the SNTP lines)
        q.send("date\n")
        m = q.expect(r"(\d{4})-\d\d-\d\dT\d\d:\d\d:\d\dZ")
        check(int(m.group(1)) == expected.year, f"date shows {m.group(0)}")
        q.send("poweroff\n")
        check(q.wait_exit(timeout=10) == 0, "poweroff")
    finally:
        q.kill()
        server.close()
    print(f"sntp: clock set from the host's SNTP responder a year ahead of the RTC; {forged} forged answer(s) ignored")


if __name__ == "__main__":
    main(test)
