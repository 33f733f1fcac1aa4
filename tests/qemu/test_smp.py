#!/usr/bin/env python3
"""The other cores (issue 36, first part): on virt with four vCPUs the kernel starts the three it
did not boot on through PSCI CPU_ON, each turns its MMU on with the boot core's tables and waits
in WFI. The banner and the log say 4 of 4 online; an MCP client over HTTP reads kernel_info's
`cpus` and kernel://status's; the idle appliance with its parked cores does not burn a host core
(the same bound as qemu.idle, which boots one); PSCI SYSTEM_OFF ends the machine with every core
in it. Prints the idle CPU share."""
import json
import socket
import time

from harness import Qemu, check, idle_share, main, mcp_post

KEY = "smp-test-key-0123456789abcdef"
LIMIT = 0.10  # share of one host core (qemu.idle's)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test(args):
    port = free_port()
    q = Qemu(args.kernel, cpu=args.cpu, gic=args.gic, el2=args.el2,
             run_args=["--smp", "4", "--net", "--static-ip", "--hostfwd", f"127.0.0.1:{port}:8080",
                       "--key", f"admin:smp:{KEY}"])
    try:
        q.expect(r"smp: 4 of 4 cores online, each but the boot core waiting in WFI", timeout=20)
        q.expect(r"cores: 4 online of 4")
        q.expect(r"basalt> ", timeout=20)
        url = f"http://127.0.0.1:{port}/mcp"
        status = answer = session = None
        for _ in range(50):  # the HTTP endpoint comes up with the net task
            try:
                status, answer, session = mcp_post(url, {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
                    KEY)
                break
            except OSError:
                time.sleep(0.2)
        check(status == 200, f"initialize: {answer}")
        mcp_post(url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, KEY, session)
        _, info, _ = mcp_post(url, {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                                    "params": {"name": "kernel_info", "arguments": {}}}, KEY, session)
        cpus = info["result"]["structuredContent"]["cpus"]
        check(cpus == {"online": 4, "listed": 4}, f"kernel_info cpus: {cpus}")
        _, res, _ = mcp_post(url, {"jsonrpc": "2.0", "id": 3, "method": "resources/read",
                                   "params": {"uri": "kernel://status"}}, KEY, session)
        status_doc = json.loads(res["result"]["contents"][0]["text"])
        check(status_doc["cpus"] == {"online": 4, "listed": 4}, f"kernel://status cpus: {status_doc['cpus']}")

        share, cpu, wall = idle_share(q)
        print(f"4 cores, idle: the QEMU process used {share * 100:.1f}% of one core ({cpu:.2f} s in {wall:.2f} s)")
        check(share < LIMIT, f"idle with four cores: {share * 100:.1f}% of a core (limit {LIMIT * 100:.0f}%)")
        q.send("poweroff\n")
        check(q.wait_exit(timeout=10) == 0, "poweroff with four cores")
    finally:
        q.kill()


if __name__ == "__main__":
    main(test)
