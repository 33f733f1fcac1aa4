#!/usr/bin/env python3
"""Swarm density and membership figures: for each size, ./basalt swarm up (mesh, -m 32M), the
time from launch until every node sees every other alive (asked over each node's MCP line), the
idle CPU share of each QEMU over a quiet window, the swarm's resident memory (total, and private
per node: what one more node costs), the fabric's frame rate while idle; then, for the first
size, the time from killing a node until every other declares it dead, against the suspicion
setting.

  python3 tests/bench/swarm_bench.py [--sizes 5,16,32] [--idle-s 10] [--suspicion 3,5] [--stagger-ms MS]
"""
import argparse
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "qemu", "swarm"))
import node_mcp  # noqa: E402
import views  # noqa: E402

SWARM = os.path.join(ROOT, "qemu", "swarm", "swarm.py")


def swarm(*args):
    r = subprocess.run(["python3", SWARM, *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"swarm {' '.join(args)}: {r.stderr}")
    return r.stdout


def state_of(run):
    sys.path.insert(0, os.path.join(ROOT, "qemu", "swarm"))
    import swarm as swarm_module
    return swarm_module.load(run)


def private_kib(pid):
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            total = 0
            for line in f:
                if line.startswith(("Private_Clean:", "Private_Dirty:")):
                    total += int(line.split()[1])
            return total
    except OSError:
        return 0


def every_node(nodes, holds):
    """Whether holds(view) is true of every node's own cluster_status (False if one does not answer)."""
    for n in nodes:
        try:
            v = node_mcp.call(n["serial"], "cluster_status", timeout=3)
        except (OSError, node_mcp.NodeError):
            return False
        if not holds(v):
            return False
    return True


def converged(nodes, want):
    return every_node(nodes, lambda v: v["counts"]["alive"] == want)


def dead_everywhere(nodes, name):
    return every_node(nodes, lambda v: any(m["name"] == name and m["state"] == "dead" for m in v["members"]))


def measure(size, idle_s, suspicion=None, detect=False, stagger_ms=0):
    run = f"bench-{size}-{os.getpid()}"
    args = ["up", "--nodes", str(size), "--topology", "mesh", "--run", run, "--stagger-ms", str(stagger_ms)]
    if suspicion:
        args += ["--suspicion", str(suspicion)]
    t0 = time.monotonic()
    swarm(*args)
    try:
        state = state_of(run)
        nodes = state["node"]
        while not converged(nodes, size):
            if time.monotonic() - t0 > 180:
                views_now = views.collect(state, os.path.join(ROOT, "build", "swarm", run), lambda *a: {"status": "running"},
                                          sample_s=0.1)
                counts = [n.get("cluster", {}).get("counts") for n in views_now["nodes"]]
                print(f"{size} nodes did not converge in 180 s; their counts: {counts}", flush=True)
                return None
            time.sleep(0.2)
        boot_to_converged = time.monotonic() - t0
        fig = {"nodes": size, "converged_s": boot_to_converged}
        if idle_s:
            time.sleep(2)  # the probes of the convergence are over
            d = os.path.join(ROOT, "build", "swarm", run)
            before = {n["id"]: views.cpu_ticks(n["pid"]) for n in nodes}
            frames0 = views.fabric_stats(d)["delivered"]
            t1 = time.monotonic()
            time.sleep(idle_s)
            el = time.monotonic() - t1
            frames1 = views.fabric_stats(d)["delivered"]
            shares = [100.0 * (views.cpu_ticks(n["pid"]) - before[n["id"]]) / views.CLOCK_TICK / el for n in nodes]
            fig.update(cpu_mean=sum(shares) / size, cpu_max=max(shares), cpu_total=sum(shares),
                       rss_mib=sum(views.resident_kib(n["pid"]) for n in nodes) / 1024,
                       private_mib=sum(private_kib(n["pid"]) for n in nodes) / 1024 / size,
                       frames_per_s=(frames1 - frames0) / el)
        if detect:
            swarm("fault", "kill", "1", "--run", run)
            t2 = time.monotonic()
            others = [n for n in nodes if n["id"] != 1]
            while not dead_everywhere(others, "node-1"):
                if time.monotonic() - t2 > 60:
                    sys.exit("the killed node was not declared dead in 60 s")
                time.sleep(0.1)
            fig["detect_s"] = time.monotonic() - t2
            v = node_mcp.call(others[0]["serial"], "cluster_status")
            fig["suspicion_ms"] = v["protocol"]["suspicion_ms"]
        return fig
    finally:
        swarm("down", "--run", run)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", default="5,16")
    p.add_argument("--idle-s", type=float, default=10)
    p.add_argument("--suspicion", default="2,5")
    p.add_argument("--stagger-ms", type=int, default=0, help="start each swarm's nodes this far apart")
    a = p.parse_args()
    print(f"{'nodes':>5} {'converged':>10} {'idle cpu/node':>14} {'max':>6} {'swarm cpu':>10} {'RSS total':>10} "
          f"{'private/node':>13} {'fabric frames/s':>16}")
    for size in (int(s) for s in a.sizes.split(",")):
        f = measure(size, a.idle_s, stagger_ms=a.stagger_ms)
        if f is None:
            continue
        print(f"{f['nodes']:>5} {f['converged_s']:>9.1f}s {f['cpu_mean']:>13.2f}% {f['cpu_max']:>5.1f}% "
              f"{f['cpu_total']:>9.1f}% {f['rss_mib']:>8.0f}MiB {f['private_mib']:>11.1f}MiB {f['frames_per_s']:>16.0f}",
              flush=True)
    print("\nfailure detection (5 nodes, mesh; kill -> dead on every other node, MCP polled every 0.1 s):")
    for mult in (int(s) for s in a.suspicion.split(",") if s):
        f = measure(5, 0, suspicion=mult, detect=True)
        print(f"  suspicion x{mult} ({f['suspicion_ms']} ms): declared dead everywhere after {f['detect_s']:.1f} s", flush=True)


if __name__ == "__main__":
    main()
