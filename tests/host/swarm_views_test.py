#!/usr/bin/env python3
"""./basalt swarm status and graph (qemu/swarm/views.py) on a consensus group with a spare, from
cluster_status answers as the nodes give them: the leader shows its term, commit and each server's
lag by address (a newcomer's raft id is its address), a follower its role and term, a spare says
it is one; the graph draws the leader with a double ring and names the spare."""
import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "qemu", "swarm"))
import views  # noqa: E402


def check(condition, message):
    if not condition:
        print(f"FAIL: {message}")
        sys.exit(1)


SERVERS = [{"member": 1, "address": "10.10.0.1:7947", "role": "voter"},
           {"member": 2, "address": "10.10.0.2:7947", "role": "voter"},
           {"member": 168427524, "address": "10.10.0.4:7947", "role": "voter"}]


def consensus(member, role, in_configuration=True, replicas=()):
    return {"member": member, "role": role, "term": 4, "leader": 1, "commit": 9, "last_index": 9,
            "in_configuration": in_configuration, "servers": SERVERS if in_configuration else [],
            "replicas": list(replicas)}


def node(i, raft):
    return {"id": i, "name": f"node-{i}", "address": f"10.10.0.{i + 1}", "state": "running", "url": None,
            "cpu_percent": 1.0, "rss_kib": 2048, "rogue": False,
            "cluster": {"incarnation": 1, "counts": {"alive": 4, "suspect": 0, "dead": 0}, "members": {},
                        "refused": 0},
            "raft": views.raft_entry(raft)}


def main():
    leader = consensus(1, "leader", replicas=[{"member": 1, "match": 9, "lag": 0}, {"member": 2, "match": 9, "lag": 0},
                                              {"member": 168427524, "match": 7, "lag": 2}])
    out = {"run": "t", "topology": "mesh", "seed": 1, "fabric": "up", "uptime_s": 1.0, "cluster": "t", "links": [],
           "nodes": [node(0, leader), node(1, consensus(2, "follower")), node(3, consensus(168427524, "follower")),
                     node(4, consensus(168427525, "follower", in_configuration=False))]}
    text = io.StringIO()
    with contextlib.redirect_stdout(text):
        views.print_status(out)
    lines = {line.split()[0]: line for line in text.getvalue().splitlines() if line.strip().startswith("node-")}
    check("raft leader (term 4, commit 9, lag 10.10.0.1:0 10.10.0.2:0 10.10.0.4:2)" in lines["node-0"],
          f"the leader's line: {lines['node-0']}")
    check("raft follower (term 4, commit 9)" in lines["node-3"], f"the newcomer's line: {lines['node-3']}")
    check(lines["node-4"].endswith("; raft spare"), f"the spare's line: {lines['node-4']}")
    dot = views.graph_dot(out)
    check('n0 [label="node-0\\n10.10.0.1\\n4/4 alive\\nraft leader t4", fillcolor' in dot and "doublecircle" in dot,
          "the leader drawn with its role and a double ring")
    check("raft spare" in dot and dot.count("doublecircle") == 1, "the spare named, one leader drawn")
    print("swarm views: leader, follower, newcomer and spare shown as the nodes report them")


if __name__ == "__main__":
    main()
