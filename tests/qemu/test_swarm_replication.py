#!/usr/bin/env python3
"""Replicated collections across a swarm (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/raft-replication.json. Four nodes in a mesh, the first three the cluster's
consensus group on disks of their own: a collection created with replicas 3 at the leader exists on
every voter; vectors upserted at the leader are read back on each voter (through each node's own
MCP line), and so is one written at a follower (forwarded to the leader under the cluster key);
a node outside the group refuses to create one; the leader killed, the other two elect another that takes more writes, and the killed
node, restarted on its disk, holds every vector again. Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"repl-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-replication", run)
        reads = re.findall(r"vector_get on node (\d+): \{\"vectors\"", out)
        check(len(reads) == 3 + 3 + 2 + 3, f"reads on the voters: {reads}")
        check(re.search(r"collection_drop on node 3: .*\"dropped\": \"elsewhere\"", out) is not None,
              "a node outside the consensus group created a collection and dropped it")
        terms = [int(t) for t in re.findall(r"leader node-\d+, term (\d+)", out)]
        check(len(terms) == 3 and terms[1] > terms[0], f"terms agreed: {terms}")
    finally:
        take_down(run, ("raft-replication",))
    print(f"replication: scenario in {took:.0f} s; 6 vectors written through two leaders (terms {terms[0]} and "
          f"{terms[1]}) and a follower, read back on every voter, the killed leader caught up after its restart")


if __name__ == "__main__":
    main(test)
