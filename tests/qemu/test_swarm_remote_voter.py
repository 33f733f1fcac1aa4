#!/usr/bin/env python3
"""A consensus group with a voter on another machine (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/raft-remote-voter.json. Three voters on disks, node 2 attached to the fabric
over UDP on 127.0.0.1 (as `up --udp` attaches a node on another host): a replicated collection
created at the leader takes a write at every voter (a follower's forwarded, and the first one
made at once after the create: the follower's read barrier finds the collection), every voter
reads all three at once; the leader killed, the two left elect another and take a fourth write.
Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"rv-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("raft-remote-voter", run)
        reads = re.findall(r"vector_get on node (\d+): \{\"vectors\"", out)
        check(sorted(set(reads)) == ["0", "1", "2"], f"every voter read, the remote one included: {reads}")
        terms = [int(t) for t in re.findall(r"leader node-\d+, term (\d+)", out)]
        check(len(terms) == 2 and terms[1] > terms[0], f"terms agreed: {terms}")
    finally:
        take_down(run, ("raft-remote-voter",))
    print(f"remote voter: scenario in {took:.0f} s; a replicated collection kept and written through a voter "
          f"attached over UDP, and after the leader's death")


if __name__ == "__main__":
    main(test)
