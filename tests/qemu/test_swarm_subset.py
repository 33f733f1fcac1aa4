#!/usr/bin/env python3
"""Replicated collections on some of the cluster's voters (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/raft-subset.json. Five voters in group 0; collections with replicas 3 are
placed on three of them (the creating node and the least loaded), replicas 5 on all; the voters a
placement names hold the collection and read it linearizably, the others answer held_elsewhere to
reads and carry changes to the collection's voters (answered with the outcome the group applied);
a federated search finds it from a node without a copy; a drop forgets the placement. Nothing is
left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"sub-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-subset", run)
        refused = re.findall(r"on node (\d+): refused as expected \(held_elsewhere\)", out)
        check(sorted(refused) == ["1", "2", "3", "4"], f"the nodes without a copy said so when read: {refused}")
        gets = re.findall(r"vector_get on node (\d+): .*\"consistency\": \"linearizable\"", out)
        check(len(gets) >= 3, f"the placement's voters read linearizably: {gets}")
    finally:
        take_down(run, ("raft-subset",))
    print(f"subset: scenario in {took:.0f} s; replicas 3 on three of five voters (the others held_elsewhere), "
          f"replicas 5 on all, the drop forgotten")


if __name__ == "__main__":
    main(test)
