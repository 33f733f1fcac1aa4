#!/usr/bin/env python3
"""Federated search across a swarm (issue 35): ./basalt swarm run with
qemu/swarm/scenarios/federated-search.json. Six nodes in a mesh, five with a collection "notes"
of their own (two vectors each, at distances that differ from node to node), the sixth with none:
vector_search {scope: "cluster"} on three different nodes (one of them holding no such collection)
returns exactly the merge of every node's top k (each hit naming its node) and says one node holds
none; scope cluster refuses filter_ids; a paused node leaves the search partial with that node
named missing; resumed, the search is whole again; the asking node counts its searches and the
partial one. Nothing is left running."""
import os
import re

from harness import check, main
from test_swarm_membership import run_scenario, take_down


def test(args):
    run = f"fed-{os.getpid()}"  # (the run names the cluster: 31 characters at most)
    try:
        out, took = run_scenario("federated-search", run)
        merged = re.findall(r"vector_search on node (\d+): \{\"scope\": \"cluster\"", out)
        check(len(merged) == 6, f"six federated searches answered: {merged}")
        check(re.search(r"refused as expected \(unsupported_with_scope\)", out) is not None, "filter_ids refused")
    finally:
        take_down(run, ("federated-search",))
    print(f"federated search: scenario in {took:.0f} s; the merge of five nodes' top k on three nodes, partial with "
          f"the paused node named, whole again once it resumed")


if __name__ == "__main__":
    main(test)
