#!/usr/bin/env python3
"""Replicated collections across the whole swarm (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/raft-outside.json. Nodes 0-2 are the cluster's consensus group, nodes 3 and 4
are not: they learn the directory of replicated collections from group 0's leader, are chosen as
a collection's voters (replicas 3 beyond group 0's voters, replicas 5 with a group 0 of three),
run its Raft group and hold its copy; nodes without a copy read and change it through its voters.
Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"out-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-outside", run)
        # Nodes 3 and 4 held a copy of "notes" (no served_by: read here) and read "facts" through a voter.
        own = re.findall(r"vector_get on node ([34]): .*\"consistency\": \"linearizable\"}", out)
        check("4" in own, f"a node outside group 0 reads its own copy linearizably: {own}")
        served = re.findall(r"vector_get on node ([34]): .*\"served_by\": \"node-([0-2])\"", out)
        check({n for n, _ in served} == {"3", "4"}, f"and reads a collection it holds no copy of through a voter: {served}")
    finally:
        take_down(run, ("raft-outside",))
    print(f"outside: scenario in {took:.0f} s; placements on nodes outside group 0, replicas 5 with a group 0 of "
          f"three, reads and changes from every node")


if __name__ == "__main__":
    main(test)
