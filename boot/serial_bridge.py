#!/usr/bin/env python3
"""The host side of a serial MCP line: a stdio MCP server that bridges to a board's UART, so any
MCP client configuration (the same shape as for `./basalt run --stdio`) reaches a Raspberry Pi
over a USB-serial adapter. Run as `./basalt serial /dev/ttyUSB0 [--baud 115200]`; the board must
boot with `mcp=serial` (./basalt flash --append mcp=serial).

Newline-delimited JSON-RPC in both directions. What the board sends that is not a JSON object
(a console banner, a boot message, line noise) goes to stderr, never to the client. Ends when
stdin closes (after the board's answers to what was sent have had a moment) or on SIGTERM/SIGINT.
Only the standard library: termios for raw mode and the baud rate."""
import argparse
import os
import select
import signal
import socket
import stat
import sys
import termios
import time
import tty

BAUDS = {9600: termios.B9600, 19200: termios.B19200, 38400: termios.B38400, 57600: termios.B57600,
         115200: termios.B115200, 230400: termios.B230400, 460800: termios.B460800, 921600: termios.B921600}
MAX_LINE = 4 << 20  # a line longer than the appliance's own limit is noise, not JSON-RPC


def open_line(path, baud):
    if stat.S_ISSOCK(os.stat(path).st_mode):  # a QEMU serial socket (./basalt swarm's nodes)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        fd = os.dup(s.fileno())
        s.close()
        os.set_blocking(fd, False)
        return fd
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    if not os.isatty(fd):
        os.close(fd)
        raise SystemExit(f"serial: {path} is not a terminal device")
    tty.setraw(fd)
    attrs = termios.tcgetattr(fd)
    attrs[4] = attrs[5] = BAUDS[baud]            # ispeed, ospeed
    attrs[2] |= termios.CLOCAL | termios.CREAD  # no modem control lines
    attrs[2] &= ~termios.CRTSCTS if hasattr(termios, "CRTSCTS") else ~0
    termios.tcsetattr(fd, termios.TCSANOW, attrs)
    termios.tcflush(fd, termios.TCIOFLUSH)      # nothing stale from before we opened it
    return fd


def write_all(fd, data, stop):
    while data and not stop():
        try:
            n = os.write(fd, data)
            data = data[n:]
        except BlockingIOError:
            select.select([], [fd], [], 0.1)


def main():
    p = argparse.ArgumentParser(description="stdio MCP server bridged to a board's serial line")
    p.add_argument("device", help="the serial device, e.g. /dev/ttyUSB0, or a QEMU serial socket")
    p.add_argument("--baud", type=int, default=115200, choices=sorted(BAUDS))
    args = p.parse_args()
    try:
        line = open_line(args.device, args.baud)
    except OSError as e:
        raise SystemExit(f"serial: cannot open {args.device}: {e.strerror}")

    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)

    stdin, stdout = sys.stdin.buffer.fileno(), sys.stdout.buffer.fileno()
    os.set_blocking(stdin, False)
    from_board = b""
    input_open = True
    drain_until = None
    print(f"serial: bridging stdio to {args.device} at {args.baud} baud", file=sys.stderr, flush=True)
    while not stopping:
        if drain_until is not None and time.monotonic() >= drain_until:
            break
        readers = [line] + ([stdin] if input_open else [])
        try:
            ready, _, _ = select.select(readers, [], [], 0.1)
        except InterruptedError:
            continue
        if stdin in ready:
            try:
                data = os.read(stdin, 65536)
            except BlockingIOError:
                data = None
            if data == b"":
                input_open = False
                drain_until = time.monotonic() + 1.0  # the answers to what was sent last
            elif data:
                write_all(line, data, lambda: stopping)
        if line in ready:
            try:
                data = os.read(line, 65536)
            except BlockingIOError:
                data = b""
            except OSError:
                print(f"serial: {args.device} went away", file=sys.stderr)
                break
            from_board += data
            while b"\n" in from_board:
                one, from_board = from_board.split(b"\n", 1)
                one = one.rstrip(b"\r")
                if one.lstrip().startswith(b"{"):
                    write_all(stdout, one + b"\n", lambda: False)
                elif one.strip():
                    print(f"serial: (board) {one.decode(errors='replace')}", file=sys.stderr, flush=True)
            if len(from_board) > MAX_LINE:
                print("serial: an over-long line from the board was dropped", file=sys.stderr)
                from_board = b""
    os.close(line)


if __name__ == "__main__":
    main()
