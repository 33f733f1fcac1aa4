#!/usr/bin/env python3
"""A dead voter replaced (issue 35): ./basalt swarm run with qemu/swarm/scenarios/raft-replace.json.
Five nodes on disks of their own, three voters and two spares. A voter killed is replaced by hand
(cluster_replace at the leader): the first spare catches up from the leader's snapshot and the
collections it covers, becomes a voter, reads every vector and commits with the others. The leader
killed next is replaced on its own by the second spare once dead past raft_replace_after_s. The
two removed voters, restarted on their disks, disturb nobody. Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"rp-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-replace", run)
        # (The scenario's own steps assert the replacements' ends; this checks what reached the newcomers.)
        replaced = re.findall(r"cluster_replace on node (\d+): (.*)", out)
        check(len(replaced) == 1 and '"with": "10.10.0.4"' in replaced[0][1], f"the replacement asked: {replaced}")
        stats = re.findall(r"collection_stats on node (\d+): (.*)", out)
        check([n for n, _ in stats] == ["3", "4"] and '"count": 42' in stats[0][1] and '"count": 44' in stats[1][1],
              f"the newcomers hold every vector: {stats}")
    finally:
        take_down(run, ("raft-replace",))
    print(f"replace: scenario in {took:.0f} s; a dead voter replaced by hand (the newcomer caught up from the "
          f"leader's snapshot), the killed leader replaced automatically past raft_replace_after_s; the newcomers "
          f"hold every vector; the removed voters restarted, the group kept serving")


if __name__ == "__main__":
    main(test)
