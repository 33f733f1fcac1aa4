#!/usr/bin/env python3
"""Cluster membership on a swarm, proven by ./basalt swarm run with the scenarios in
qemu/swarm/scenarios (each assertion checked against what the nodes report over MCP):
  ring-membership: 5 nodes in a ring and a 6th with the wrong cluster key converge without it
    (refused, in the kernel log and the audit trail); a killed node is declared dead within its
    suspicion time plus a few periods; restarted, it rejoins as a later boot (alive again whatever
    incarnation it was held dead at); a
    partition makes each side declare the other dead; healed, one view again.
  star-convergence: 5 nodes in a star converge; a probe crosses two links.
  mesh-loss: 5 nodes in a mesh with 20 % loss on every link for a minute: no false death.
Each run must take its swarm down: no QEMU, fabric or state left behind."""
import os
import re
import subprocess
import sys
import time

from harness import ROOT, check, main

SWARM = os.path.join(ROOT, "qemu", "swarm", "swarm.py")
SCENARIOS = os.path.join(ROOT, "qemu", "swarm", "scenarios")


def processes_of(state_dir):
    found = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as f:
                    if state_dir.encode() in f.read():
                        found.append(int(pid))
            except OSError:
                pass
    return found


def run_scenario(name, run):
    run = f"{run}-{name}"  # each its own state directory and sockets
    state = os.path.join(ROOT, "build", "swarm", run)
    started = time.monotonic()
    r = subprocess.run(["python3", SWARM, "run", os.path.join(SCENARIOS, f"{name}.json"), "--run", run],
                       capture_output=True, text=True, timeout=400)
    took = time.monotonic() - started
    print(r.stdout)
    check(r.returncode == 0 and "scenario held" in r.stdout, f"{name}: {r.stdout[-1500:]} {r.stderr[-1500:]}")
    check(not os.path.exists(state), f"{name}: the run's state is left behind")
    check(not processes_of(state), f"{name}: processes left running: {processes_of(state)}")
    return r.stdout, took


def take_down(run, names):
    """Whatever a scenario run left (it takes its swarm down itself unless it failed badly)."""
    for name in names:
        state = os.path.join(ROOT, "build", "swarm", f"{run}-{name}")
        if os.path.exists(os.path.join(state, "swarm.json")):
            subprocess.run(["python3", SWARM, "down", "--run", f"{run}-{name}"], capture_output=True)
        for pid in processes_of(state):
            os.kill(pid, 9)


def held_after(out, what):
    m = re.search(r"held after ([0-9.]+) s: " + re.escape(what), out)
    check(m is not None, f"no '{what}' in the output")
    return float(m.group(1))


def test(args):
    run = f"member-{os.getpid()}"
    try:
        out, took = run_scenario("ring-membership", run)
        # Default parameters: 1 s period, suspicion 5 periods for up to 9 members. Before the
        # suspicion starts, some member must probe the dead one: with shuffled rounds over the 4
        # others that is within 2 x 4 - 1 periods at worst (usually one or two); the step polls
        # every half second over MCP (one more second).
        detect = held_after(out, "node-2 dead on")
        check(detect <= 5 + (2 * 4 - 1) + 1, f"death declared after {detect} s, more than SWIM's worst case")
        check("step 7" in out and "node-2 alive" in out, "the restarted node came back alive (as a later boot)")
        star, _ = run_scenario("star-convergence", run)
        loss, loss_took = run_scenario("mesh-loss", run)
        check("held for 60 s: no deaths" in loss, "the minute of loss")
    finally:
        take_down(run, ("ring-membership", "star-convergence", "mesh-loss"))
    print(f"membership: ring scenario in {took:.0f} s (death declared {detect:.1f} s after the kill), star converged, "
          f"a minute of 20 % loss on a mesh without a false death ({loss_took:.0f} s)")


if __name__ == "__main__":
    main(test)
