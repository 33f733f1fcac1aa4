#!/usr/bin/env python3
"""Replicated collections each in a Raft group of its own (issue 35; raft_groups=1): ./basalt swarm
run with qemu/swarm/scenarios/raft-groups.json. A collection created at a follower is placed
through the cluster's group 0 and created in its own group; changes at any voter and linearizable
reads go through that group; group 0's leader killed, the collection's group takes 41 more changes;
restarted, the killed node installs that group's snapshot and fetches that group's collection
only; dropped, the collection's placement is forgotten and its group left. Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"grp-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-groups", run)
        stats = re.findall(r"collection_stats on node (\d+): (.*)", out)
        check(len(stats) == 3 and all('"count": 41' in s for _, s in stats), f"41 vectors on every voter: {stats}")
        terms = [int(t) for t in re.findall(r"leader node-\d+, term (\d+)", out)]
        check(len(terms) == 3 and terms[1] > terms[0], f"terms agreed: {terms}")
    finally:
        take_down(run, ("raft-groups",))
    print(f"groups: scenario in {took:.0f} s; 41 vectors through a collection's own group on every voter, the "
          f"killed node caught up from that group's snapshot with its one collection, the drop forgotten")


if __name__ == "__main__":
    main(test)
