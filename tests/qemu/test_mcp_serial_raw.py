#!/usr/bin/env python3
"""MCP on the serial line, raw: malformed lines get JSON-RPC errors carrying the envelope, an
overlong line is discarded up to its newline and answered, and the line keeps working. Runs on
the PL011 (--line uart, as on a Pi) and on the virtio console port (--line virtio, run.sh
--stdio as a client would start it)."""
import json
import time

from harness import Qemu, check, main


def test(args):
    if args.line == "virtio":
        q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, semihosting=False, run_args=["--stdio"])
    else:
        q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2, semihosting=False, append="mcp=serial")
    try:
        def rpc(line):
            q.send(line + "\n")
            m = q.expect(r"(\{.*\})\n", timeout=30)
            return json.loads(m.group(1))

        r = rpc('{"jsonrpc":"2.0","id":0,"method":"ping"}')
        check(r == {"jsonrpc": "2.0", "id": 0, "result": {}}, f"ping: {r}")
        check("Basalt" not in q.output and "basalt>" not in q.output, "banner or prompt leaked onto the MCP line")

        cases = [
            ("this is not json", -32700, "bad_token"),
            ('{"jsonrpc":"2.0","id":1,"method":"ping"', -32700, "unexpected_end"),
            ('{"jsonrpc":"2.0","id":2,"id":3,"method":"ping"}', -32700, "duplicate_key"),
            ('{"jsonrpc":"2.0","id":4,"method":"ping","x":"\xff"}', -32700, "bad_utf8"),
            ("[" * 100 + "]" * 100, -32700, "too_deep"),
            ('{"jsonrpc":"1.0","id":5,"method":"ping"}', -32600, "invalid_request"),
            ('{"jsonrpc":"2.0","id":6,"method":"no/such"}', -32601, "unknown_method"),
        ]
        for line, code, reason in cases:
            q.proc.stdin.write(line.encode("latin-1") + b"\n")
            q.proc.stdin.flush()
            m = q.expect(r"(\{.*\})\n", timeout=30)
            r = json.loads(m.group(1))
            check(r["error"]["code"] == code, f"{line[:40]!r}: code {r['error']['code']}, expected {code}")
            env = r["error"]["data"]
            check(env["ok"] is False and env["error"]["details"]["reason"] == reason,
                  f"{line[:40]!r}: envelope {env}")
            check(env["timestamp"].endswith("Z"), "RFC 3339 UTC timestamp")

        # An overlong line (over 1 MiB) is dropped up to its newline and answered once.
        t0 = time.monotonic()
        q.proc.stdin.write(b'{"pad":"' + b"x" * (1 << 20) + b'"}\n')
        q.proc.stdin.flush()
        m = q.expect(r"(\{.*\})\n", timeout=90)
        r = json.loads(m.group(1))
        check(r["error"]["code"] == -32600 and r["error"]["data"]["error"]["details"]["reason"] == "message_too_long",
              f"overlong line: {r}")
        print(f"1 MiB line discarded in {time.monotonic() - t0:.1f} s")
        r = rpc('{"jsonrpc":"2.0","id":"still-alive","method":"ping"}')
        check(r.get("id") == "still-alive" and r.get("result") == {}, f"line dead after overflow: {r}")
        q.proc.stdin.write(b'{"jsonrpc":"2.0","method":"notifications/initialized"}\n')
        r = rpc('{"jsonrpc":"2.0","id":9,"method":"ping"}')
        check(r.get("id") == 9, "a notification must not be answered")

        # Backpressure: a client that stops reading while ~250 KB of answers are due (more than the
        # host pipe and the line's buffers hold) gets every byte once it reads again.
        n = 120
        q.proc.stdin.write(b"".join(b'{"jsonrpc":"2.0","id":%d,"method":"tools/list"}\n' % (100 + i) for i in range(n)))
        q.proc.stdin.flush()
        time.sleep(3)
        t0 = time.monotonic()
        total = 0
        for i in range(n):
            m = q.expect(r"(\{.*\})\n", timeout=60)
            total += len(m.group(1)) + 1
            r = json.loads(m.group(1))
            check(r.get("id") == 100 + i and len(r["result"]["tools"]) > 0, f"answer {i} after the stall: {str(r)[:200]}")
        print(f"{n} answers ({total} bytes) held back by a stalled reader arrived whole, "
              f"drained in {time.monotonic() - t0:.2f} s")
        r = rpc('{"jsonrpc":"2.0","id":"after-stall","method":"ping"}')
        check(r.get("id") == "after-stall", f"line dead after the stall: {r}")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
