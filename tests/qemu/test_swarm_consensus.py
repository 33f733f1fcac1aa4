#!/usr/bin/env python3
"""The cluster's consensus group across a swarm (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/raft-failover.json. Five nodes in a mesh, the first three running canonical's
Raft engine in their kernels over UDP under the cluster key: the three agree on one leader and
term (exactly one reports itself leader); the leader is killed (SIGKILL) and the other two agree on
another leader in a higher term; the killed node is restarted on its disk, takes up its term and
log from it (part of them from a checkpoint: the voters checkpoint at every KiB of log) instead of
joining as new, and all three agree again. Each assertion is checked against what the nodes report
over MCP (cluster_status, kernel_log). Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"consensus-{os.getpid()}"
    try:
        out, took = run_scenario("raft-failover", run)
        terms = [int(t) for t in re.findall(r"leader node-\d+, term (\d+)", out)]
        check(len(terms) == 3 and terms[1] > terms[0] and terms[2] >= terms[1], f"terms agreed: {terms}")
        failover = re.findall(r"held after ([0-9.]+) s: .* agree on one leader and term \(not node", out)
        check(len(failover) == 1, "the failover step")
        back = re.search(r"node-\d+ took up term (\d+) and (\d+) entries from its disk \((\d+) bytes from a checkpoint", out)
        check(back is not None and int(back.group(1)) >= terms[0], "the restarted leader took up its own term")
    finally:
        take_down(run, ("raft-failover",))
    print(f"consensus: scenario in {took:.0f} s, a new leader agreed {float(failover[0]):.1f} s after the leader "
          f"was killed, terms {terms}; the killed leader came back with term {back.group(1)} and {back.group(2)} "
          f"entries ({back.group(3)} bytes from a checkpoint)")


if __name__ == "__main__":
    main(test)
