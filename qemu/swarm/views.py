"""What ./basalt swarm shows of a run: status (each node's process, its QEMU's CPU share and
memory, and what the node itself reports about its peers), a node's kernel log, and the topology
drawn with Graphviz."""
import json
import os
import subprocess
import sys
import time

import node_mcp
from fabric_control import FabricControl

CLOCK_TICK = os.sysconf("SC_CLK_TCK")


def process_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def cpu_ticks(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return int(fields[11]) + int(fields[12])  # utime + stime
    except (OSError, IndexError, ValueError):
        return None


def resident_kib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return None


def fabric_stats(run_dir):
    try:
        control = FabricControl(os.path.join(run_dir, "control.sock"))
        answer = control(cmd="stats")
        control.close()
        return answer if answer.get("ok") else None
    except OSError:
        return None


def cluster_view(node, timeout=3.0):
    """The node's own cluster_status, or None (paused, booting, gone)."""
    try:
        return node_mcp.call(node["serial"], "cluster_status", timeout=timeout)
    except (OSError, node_mcp.NodeError):
        return None


def raft_entry(c):
    """A member of the consensus group as cluster_status's `consensus` shows it: its role, term,
    leader, commit, whether it is a spare (a member outside the configuration until it replaces a
    voter), and at the leader each server's lag, by address."""
    where = {v["member"]: v["address"].split(":")[0] for v in c.get("servers", [])}
    return {"member": c["member"], "role": c["role"], "term": c["term"], "leader": c["leader"],
            "commit": c["commit"], "last_index": c["last_index"], "spare": not c.get("in_configuration", True),
            "lags": {where.get(r["member"], str(r["member"])): r["lag"] for r in c.get("replicas", [])}}


def collect(state, run_dir, qmp, sample_s=0.5):
    """One status snapshot: CPU shares are measured over sample_s now, not averaged since boot."""
    before = {n["id"]: cpu_ticks(n["pid"]) for n in state["node"]}
    t0 = time.monotonic()
    time.sleep(sample_s)
    after_all = {n["id"]: cpu_ticks(n["pid"]) for n in state["node"]}  # before the slow MCP questions
    elapsed = time.monotonic() - t0
    fabric = fabric_stats(run_dir)
    # How the fabric last heard from each node: "unix", or "udp HOST:PORT" (attached over --udp).
    ports = (fabric or {}).get("node_ports") or []
    nodes = []
    for node in state["node"]:
        running = process_alive(node["pid"])
        q = qmp(node["qmp"], "query-status") if running else None
        after = after_all.get(node["id"]) if running else None
        cpu = None
        if after is not None and before.get(node["id"]) is not None:
            cpu = round(100.0 * (after - before[node["id"]]) / CLOCK_TICK / elapsed, 1)
        entry = {"id": node["id"], "name": node.get("name", f"node-{node['id']}"), "address": node["address"],
                 "pid": node["pid"], "state": (q or {}).get("status", "gone") if running else "gone",
                 "serial": node["serial"], "url": node.get("url"), "cpu_percent": cpu, "rss_kib": resident_kib(node["pid"]) if running else None,
                 "rogue": node.get("rogue", False),
                 "fabric_port": ports[node["id"]] if node["id"] < len(ports) else None}
        view = cluster_view(node) if entry["state"] == "running" else None
        if view:
            entry["cluster"] = {"incarnation": view["incarnation"], "counts": view["counts"],
                                "members": {m["name"]: m["state"] for m in view["members"] if not m["self"]},
                                "refused": view["counters"]["bad_mac"] + view["counters"]["malformed"] +
                                view["counters"]["replayed"]}
            if view.get("consensus"):
                entry["raft"] = raft_entry(view["consensus"])
        nodes.append(entry)
    return {"run": state["run"], "topology": state["topology"], "seed": state["seed"],
            "fabric": "up" if fabric else "gone", "uptime_s": round(time.time() - state["started"], 1),
            "cluster": state.get("cluster"), "nodes": nodes, "links": (fabric or {}).get("links", [])}


def print_status(out):
    print(f"swarm '{out['run']}' ({out['topology']}, seed {out['seed']}), fabric {out['fabric']}, "
          f"up {out['uptime_s']} s")
    print(f"  {'node':8} {'state':8} {'address':12} {'MCP URL':30} {'cpu%':>5} {'rss MiB':>8}  peers (its own view)")
    for n in out["nodes"]:
        cpu = "-" if n["cpu_percent"] is None else f"{n['cpu_percent']:.1f}"
        rss = "-" if n["rss_kib"] is None else f"{n['rss_kib'] / 1024:.1f}"
        c = n.get("cluster")
        if c:
            counts = c["counts"]
            peers = f"{counts['alive']} alive, {counts['suspect']} suspect, {counts['dead']} dead (inc {c['incarnation']})"
            odd = [f"{name} {st}" for name, st in sorted(c["members"].items()) if st != "alive"]
            if odd:
                peers += ": " + ", ".join(odd)
        else:
            peers = "-"
        r = n.get("raft")
        if r and r.get("spare"):
            peers += "; raft spare"
        elif r:  # the consensus group: role and term, and at the leader each server's lag in entries
            peers += f"; raft {r['role']} (term {r['term']}, commit {r['commit']}"
            if r["lags"]:
                peers += ", lag " + " ".join(f"{m}:{lag}" for m, lag in sorted(r["lags"].items()))
            peers += ")"
        print(f"  {n['name']:8} {n['state']:8} {n['address']:12} {n.get('url') or '-':30} {cpu:>5} {rss:>8}  {peers}")
    total = sum(n["rss_kib"] or 0 for n in out["nodes"])
    share = sum(n["cpu_percent"] or 0 for n in out["nodes"])
    print(f"  total: {share:.1f} % of a core, {total / 1024:.1f} MiB resident")


def status(state, run_dir, qmp, as_json, watch):
    while True:
        out = collect(state, run_dir, qmp)
        if as_json:
            # Scripts may talk to the nodes as the run does: over HTTP with the admin key.
            out["cluster_key"] = state.get("cluster_key")
            out["admin_key"] = state.get("admin_key")
            print(json.dumps(out), flush=True)
        else:
            if watch:
                print("\033[H\033[J", end="")
            print_status(out)
        if not watch:
            return
        time.sleep(1.5)


def logs(node, follow):
    """The node's kernel log over its line; its QEMU's own output when the node is gone."""
    since = 0
    while True:
        try:
            line = node_mcp.NodeLine(node["serial"], timeout=5)
        except (OSError, node_mcp.NodeError) as e:
            sys.exit(f"swarm: node {node['id']} does not answer on its line ({e})")
        try:
            while True:
                r = line.call("kernel_log", {"since": since, "limit": 200})
                for rec in r["records"]:
                    print(f"[{rec['uptime_ns'] / 1e9:10.3f}] {rec['level']:7} {rec['text']}")
                since = r["next"]
                if not follow:
                    return
                if not r["records"]:
                    time.sleep(0.5)
        except node_mcp.NodeError as e:
            sys.exit(f"swarm: node {node['id']}: {e}")
        finally:
            line.close()


NODE_COLOURS = {"running": "palegreen", "paused": "khaki", "gone": "lightcoral"}


def graph_dot(out):
    """The topology as Graphviz: nodes coloured by state, links by theirs (cut, lossy, slow)."""
    lines = ["graph swarm {", '  layout=circo; node [style=filled, shape=circle, fontname="sans"];',
             f'  label="swarm {out["run"]} ({out["topology"]}), {time.strftime("%H:%M:%S")}";']
    for n in out["nodes"]:
        c = n.get("cluster")
        extra = f"\\n{c['counts']['alive']}/{len(out['nodes'])} alive" if c else ""
        colour = "plum" if n.get("rogue") else NODE_COLOURS.get(n["state"], "lightgrey")
        r = n.get("raft")
        if r:  # a voter: its role; the leader drawn with a double ring
            extra += "\\nraft spare" if r.get("spare") else f"\\nraft {r['role']} t{r['term']}"
        shape = ", shape=doublecircle, penwidth=2" if r and r["role"] == "leader" else ""
        lines.append(f'  n{n["id"]} [label="{n["name"]}\\n{n["address"]}{extra}", fillcolor={colour}{shape}];')
    for link in out["links"]:
        attrs = []
        if not link["up"]:
            attrs += ["style=dashed", "color=red"]
        elif link.get("loss") or link.get("delay_ms") or link.get("rate_kbps") or link.get("dup"):
            attrs.append("color=orange")
            label = []
            if link.get("loss"):
                label.append(f"loss {link['loss']:g}")
            if link.get("dup"):
                label.append(f"dup {link['dup']:g}")
            if link.get("delay_ms"):
                label.append(f"{link['delay_ms']} ms")
            if link.get("rate_kbps"):
                label.append(f"{link['rate_kbps']} kbit/s")
            attrs.append(f'label="{", ".join(label)}"')
        lines.append(f"  n{link['a']} -- n{link['b']}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines) + "\n"


def graph(out, path):
    dot = graph_dot(out)
    try:
        svg = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=True).stdout
    except FileNotFoundError:
        sys.exit("swarm: Graphviz's dot is missing (./toolchain/bootstrap.sh installs it)")
    with open(path, "w") as f:
        f.write(svg)
    return path
