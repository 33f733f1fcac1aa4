#!/usr/bin/env python3
"""A voter that fell behind the group's snapshots catches up with the replicated collections
(issue 35): ./basalt swarm run with qemu/swarm/scenarios/raft-catch-up.json. Three nodes, all of
them voters on disks of their own, snapshotting every 8 changes: the leader is killed, the other
two take 40 more changes, a new collection and a delete, so the group's log no longer reaches back
to where the killed node stopped. Restarted on its disk, that node installs the new leader's
snapshot and fetches the collections it covers from another voter before writing it
(kernel/cluster/state_transfer.h): every voter then holds the same 41 vectors (the deleted one
gone), the collection created while it was down, and a change made afterwards. Nothing is left
running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"cu-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-catch-up", run)
        stats = re.findall(r"collection_stats on node (\d+): (.*)", out)
        check(len(stats) == 3 and all('"count": 41' in s for _, s in stats), f"41 vectors on every voter: {stats}")
        check(re.search(r"cluster_status on node \d+: .*", out) is not None, "the restarted node's status read")
        terms = [int(t) for t in re.findall(r"leader node-\d+, term (\d+)", out)]
        check(len(terms) == 3 and terms[1] > terms[0], f"terms agreed: {terms}")
    finally:
        take_down(run, ("raft-catch-up",))
    print(f"catch-up: scenario in {took:.0f} s; the killed leader, 40+ changes behind the group's snapshots, "
          f"restarted and fetched 3 replicated collections; the same 41 vectors on every voter")


if __name__ == "__main__":
    main(test)
