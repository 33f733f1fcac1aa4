#!/usr/bin/env python3
"""Replicated collections on some of the cluster's voters (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/raft-subset.json. Five voters in group 0; collections with replicas 3 are
placed on three of them (the creating node and the least loaded), replicas 5 on all; the voters a
placement names hold the collection and read it linearizably, the others have their reads served by
one of its voters (after a read index there; filters and provenance too) and carry changes to the collection's voters (answered
with the outcome the group applied); a federated search finds it from a node without a copy; a
drop forgets the placement. Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"sub-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-subset", run)
        served = re.findall(r"(?:vector_get|vector_search|collection_stats) on node (\d+): .*\"served_by\": \"node-(\d)\"",
                            out)
        check({n for n, _ in served} == {"1", "2", "3", "4"}, f"the nodes without a copy were served when read: {served}")
        check(all(n != v for n, v in served), f"by another node, a voter: {served}")
        # A filtered search from outside names each hit's provenance as a voter's own get does.
        got = re.search(r"vector_get on node 3: \{\"vectors\": \[\{\"id\": 1, \"provenance_node_id\": \"([0-9a-f-]+)\"", out)
        hit = re.search(r"vector_search on node 3: \{\"hits\": \[\{\"id\": 1, \"distance\": 0, \"provenance_node_id\": \"([0-9a-f-]+)\"",
                        out)
        check(got and hit and got.group(1) == hit.group(1),
              f"provenance through a voter: {got and got.group(1)} vs {hit and hit.group(1)}")
        gets = re.findall(r"vector_get on node (\d+): .*\"consistency\": \"linearizable\"", out)
        check(len(gets) >= 3, f"the placement's voters read linearizably: {gets}")
    finally:
        take_down(run, ("raft-subset",))
    print(f"subset: scenario in {took:.0f} s; replicas 3 on three of five voters (the others read through them), "
          f"replicas 5 on all, the drop forgotten")


if __name__ == "__main__":
    main(test)
