"""./basalt swarm run SCENARIO.json: a swarm brought up as the scenario says, its timed steps run
in order, every assertion checked against what the nodes themselves report over MCP, the swarm
taken down again (unless --keep). The exit status says whether every assertion held; the
fabric's seed comes from the scenario (or --seed), so its loss and duplication draws replay.

A scenario:
  {"nodes": 5, "topology": "ring", "seed": 7, "period_ms": 1000, "suspicion": 5, "rogue": [5],
   "append": "checkpoint_kib=4", "steps": [STEP, ...]}
("append": more boot arguments for every node; "udp_nodes": [2]: those nodes reach the fabric over UDP on
127.0.0.1, as a node on another machine would with `up --udp`; "disks": true gives every node a disk.)
Steps (one key each; "nodes" is a list of node numbers or "all", rogue nodes never included):
  {"converged": {"within_s": 20}}                 every listed node sees every other honest node alive
  {"expect": {"nodes": [0, 1], "members": ["node-2"], "state": "dead", "within_s": 15,
              "incarnation_above": 1}}           ... and the member's incarnation above that
  {"fault": "kill 2"}                             any `./basalt swarm fault` (link * * loss=0.2: every link)
  {"heal": true}
  {"sleep": 2.5}
  {"hold": {"for_s": 60, "no_deaths": true}}      no node declares anyone dead meanwhile
  {"call": {"node": 0, "tool": "cluster_ping", "arguments": {...}, "expect": {"answered": true}}}
                                                  node: a number, a list (those up), or "leader", "follower", "voters",
                                                  "voters_left", "restarted" (with "raft"); "expect_error":
                                                  REASON (the call must fail so); "within_s": tried again
                                                  until it holds; expect keys may be dotted (a.b.c, a.0.c);
                                                  "expect_at_least": {KEY: N}; "expect_known": [KEY] (not null
                                                  or absent); "repeat": N makes the call N
                                                  times, an argument "$i" being the repetition (0..N-1);
                                                  "confirm": NAME answers a step-up form (a drop) with NAME;
                                                  "any": true: one of the nodes answering so is enough
  {"call": {"node": "leader", "resource": "kernel://status", "expect": {...}}}
                                                  the same checks on a resource's contents (resources/read)
  {"audited": {"node": "leader", "record": {"kind": "peer", "reason": "forwarded_change"}}}
                                                  the node's audit trail holds a decision with those fields
                                                  ("any": true: one of the listed nodes' does)
  {"refused": {"rogue": 5, "within_s": 10}}       the honest nodes refused it (counters, audit trail),
                                                  none lists it as a member
With "raft": 3 (or 5) the first 3 (5) nodes run the cluster's consensus group, each on a disk of its own:
  {"consensus": {"nodes": "voters", "within_s": 20, "new_leader": true}}
                                                  the voters (or a list of nodes, those up; "voters_left": those
                                                  but the leader a fault_leader took down) agree on
                                                  one leader and term (new_leader: another than the
                                                  last agreed, in a higher term; leader_among: one of
                                                  the listed nodes)
  {"fault_leader": "kill"}                        `./basalt swarm fault kill|pause N` on the last agreed
                                                  leader; "restart"/"resume" later brings that node back
  {"recovered": {"within_s": 20, "from_checkpoint": true}}
                                                  the node fault_leader restarted took its member's state
                                                  up from its disk (its kernel log, cluster_status's
                                                  consensus.storage and .recovered): a term no lower than
                                                  the one it led in, its log, and (from_checkpoint) part
                                                  of it from a checkpoint
"""
import re
import argparse
import json
import os
import sys
import time

import node_mcp


class StepFailed(Exception):
    pass


def lookup(result, key):
    """result[key], where a dotted key names a member of a member (consensus.replication.applied), and
    a number an item of a list (consensus.replicas.0.lag)."""
    for part in key.split("."):
        if isinstance(result, list) and part.isdigit():
            result = result[int(part)] if int(part) < len(result) else None
        else:
            result = result.get(part) if isinstance(result, dict) else None
    return result


def substitute(value, i):
    """A repeated call's arguments: the string "$i" is the repetition's number (from 0), and
    "$unit:DIM:AT" a vector of DIM numbers, 0 but 1 at AT (a number, or $i)."""
    if value == "$i":
        return i
    if isinstance(value, str) and value.startswith("$unit:"):
        dim, at = value[len("$unit:"):].split(":")
        at = i if at == "$i" else int(at)
        return [1 if d == at else 0 for d in range(int(dim))]
    if isinstance(value, list):
        return [substitute(v, i) for v in value]
    if isinstance(value, dict):
        return {k: substitute(v, i) for k, v in value.items()}
    return value


class Runner:
    def __init__(self, swarm, scenario, run):
        self.swarm = swarm  # the swarm module (up, fault, heal, down, load)
        self.scenario = scenario
        self.run = run
        self.t0 = time.monotonic()
        self.rogue = set(scenario.get("rogue", []))
        self.leader = None  # the consensus group's last agreed (node number, term)
        self.downed = None  # the leader a fault_leader took down
        self.downed_term = None  # ... and the term it led in
        self.restarted = None  # (node number, the term it led in) of the one fault_leader restarted
        self.silent = {}  # nodes that did not answer over MCP, and why

    def say(self, text):
        print(f"[{time.monotonic() - self.t0:7.1f} s] {text}", flush=True)

    def state(self):
        return self.swarm.load(self.run)

    def honest(self, spec="all"):
        nodes = self.state()["node"]
        ids = range(len(nodes)) if spec == "all" else spec
        return [nodes[i] for i in ids if i not in self.rogue]

    def view(self, node):
        try:
            return node_mcp.call(node["serial"], "cluster_status", timeout=3)
        except (OSError, node_mcp.NodeError) as e:
            self.silent[node["name"]] = str(e)
            return None

    def diagnose(self):
        """For a failure: why the nodes that did not answer did not (the process, its QEMU's output,
        the end of its console: the kernel log, a panic)."""
        lines = []
        state = self.state()
        for node in state["node"]:
            if node["name"] not in self.silent:
                continue
            log = os.path.join(self.swarm.state_dir(self.run), f"node-{node['id']}.log")
            tail = open(log).read()[-600:] if os.path.exists(log) else ""
            console = os.path.join(self.swarm.state_dir(self.run), f"console-{node['id']}.log")
            kernel = open(console, errors="replace").read()[-3000:] if os.path.exists(console) else ""
            lines.append(f"{node['name']}: {self.silent[node['name']]}; process "
                         f"{'running' if self.swarm.views.process_alive(node['pid']) else 'gone'}; its output: {tail!r}; "
                         f"the end of its console:\n{kernel}")
        return "\n".join(lines)

    def views(self, nodes):
        """Each node's cluster_status by name; (None, name) for the first that does not answer."""
        out = {}
        for n in nodes:
            v = self.view(n)
            if v is None:
                return None, n["name"]
            out[n["name"]] = v
        return out, None

    def poll(self, within_s, nodes, check, what):
        """Asks the nodes until check(their views) holds: (held, what was seen)."""
        deadline = time.monotonic() + within_s
        started = time.monotonic()
        last = None
        while True:
            views, silent = self.views(nodes)
            ok, last = check(views) if views is not None else (False, {silent: "no answer"})
            if ok:
                self.say(f"  held after {time.monotonic() - started:.1f} s: {what}")
                return
            if time.monotonic() >= deadline:
                raise StepFailed(f"not within {within_s} s: {what} (last seen: {last})")
            time.sleep(0.5)

    # --- steps ---
    def converged(self, spec):
        nodes = self.honest(spec.get("nodes", "all"))
        names = {n["name"] for n in self.honest()}

        def check(views):
            missing = {name: sorted(names - {m["name"] for m in v["members"] if m["state"] == "alive"})
                       for name, v in views.items()}
            return all(not m for m in missing.values()), {k: m for k, m in missing.items() if m}
        self.poll(spec.get("within_s", 30), nodes, check, f"{len(nodes)} nodes see all {len(names)} honest nodes alive")

    def expect(self, spec):
        nodes = self.honest(spec.get("nodes", "all"))
        members, state = spec["members"], spec["state"]
        above = spec.get("incarnation_above")

        def check(views):
            seen = {}
            for node_name, v in views.items():
                by_name = {m["name"]: m for m in v["members"]}
                for name in members:
                    m = by_name.get(name)
                    seen[f"{node_name}:{name}"] = (m["state"], m["incarnation"]) if m else None
            ok = all(s is not None and s[0] == state and (above is None or s[1] > above) for s in seen.values())
            return ok, seen
        what = f"{', '.join(members)} {state}" + (f" (incarnation > {above})" if above is not None else "")
        self.poll(spec.get("within_s", 30), nodes, check, f"{what} on {[n['name'] for n in nodes]}")

    def hold(self, spec):
        nodes = self.honest(spec.get("nodes", "all"))

        def answering():
            views, silent = self.views(nodes)
            if views is None:
                raise StepFailed(f"{silent} does not answer")
            return views
        start = answering()
        end_at = time.monotonic() + spec["for_s"]
        while True:
            time.sleep(min(2.0, max(0.0, end_at - time.monotonic())))
            now = answering()
            for name, v in now.items():
                dead = [m["name"] for m in v["members"] if m["state"] == "dead"]
                if spec.get("no_deaths") and (v["counters"]["deaths"] != start[name]["counters"]["deaths"] or dead):
                    raise StepFailed(f"{name} declared a death during the hold: {dead or 'counted'}")
            if time.monotonic() >= end_at:
                break
        suspicions = sum(v["counters"]["suspicions"] for v in now.values())
        self.say(f"  held for {spec['for_s']} s: no deaths ({suspicions} suspicions in total since boot, all refuted)")

    def call_targets(self, which):
        """A node number, or with a consensus group: "leader" (the last agreed), "follower" (a voter
        up that is not it), "voters" / "voters_left" (every voter / every voter up)."""
        if isinstance(which, int):
            return [which]
        if isinstance(which, list):  # (those of them up: the node a fault_leader took down is left out)
            return [v for v in which if v != self.downed]
        voters = [v for v in range(self.scenario.get("raft", 0)) if v != self.downed]
        if which in ("leader", "follower") and self.leader is None:
            raise StepFailed(f"call on the {which} before any consensus step agreed on a leader")
        if which == "leader":
            return [self.leader[0]]
        if which == "restarted":
            if self.restarted is None:
                raise StepFailed("call on the restarted node before a fault_leader restart")
            return [self.restarted[0]]
        if which == "follower":
            return [next(v for v in voters if v != self.leader[0])]
        if which in ("voters", "voters_left"):
            return voters
        raise StepFailed(f"call: unknown node {which!r}")

    def call(self, spec):
        if spec.get("any"):  # one of the nodes must answer so (a collection's group's leader, say)
            deadline = time.monotonic() + spec.get("within_s", 0)
            once = dict(spec, within_s=0)
            while True:
                for target in self.call_targets(spec["node"]):
                    try:
                        self.call_one(target, once)
                        return
                    except StepFailed:
                        pass
                if time.monotonic() > deadline:
                    raise StepFailed(f"{spec.get('tool') or spec['resource']}: no node of {spec['node']} answered so")
                time.sleep(0.5)
        for i in range(spec.get("repeat", 1)):
            one = dict(spec, arguments=substitute(spec.get("arguments", {}), i))
            for target in self.call_targets(spec["node"]):
                self.call_one(target, one)

    def call_one(self, target, spec):
        """The tool's result must hold every "expect" key (or, with "expect_error", the call must fail
        with that reason); within_s: tried again until it does (a replica still catching up)."""
        node = self.state()["node"][target]
        deadline = time.monotonic() + spec.get("within_s", 0)
        while True:
            problem, result = None, None
            try:
                if "resource" in spec:
                    result = node_mcp.read(node["serial"], spec["resource"], timeout=15)
                else:
                    result = node_mcp.call(node["serial"], spec["tool"], spec.get("arguments", {}), timeout=15,
                                           confirm=spec.get("confirm"))
                if "expect_error" in spec:
                    problem = f"succeeded ({json.dumps(result)[:120]}), expected the error {spec['expect_error']}"
                for key, want in spec.get("expect", {}).items():
                    if problem is None and lookup(result, key) != want:
                        problem = f"{key} is {lookup(result, key)!r}, not {want!r}"
                for key in spec.get("expect_known", []):
                    if problem is None and lookup(result, key) is None:
                        problem = f"{key} is not known"
                for key, least in spec.get("expect_at_least", {}).items():
                    got = lookup(result, key)
                    if problem is None and not (isinstance(got, (int, float)) and got >= least):
                        problem = f"{key} is {got!r}, not at least {least!r}"
            except (node_mcp.NodeError, OSError) as e:
                result = str(e)
                if "expect_error" not in spec or spec["expect_error"] not in result:
                    problem = str(e)
            if problem is None:
                break
            if time.monotonic() > deadline:
                raise StepFailed(f"{spec.get('tool') or spec['resource']} on node {target}: {problem}")
            time.sleep(0.5)
        what = spec.get("tool") or spec["resource"]
        if isinstance(result, str):
            self.say(f"  {what} on node {target}: refused as expected ({spec['expect_error']})")
        else:
            self.say(f"  {what} on node {target}: {json.dumps(result)[:160]}")

    def audited(self, spec):
        """The node's audit trail (audit://log) holds a decision with every field `spec["record"]`
        names (e.g. the leader's record of a change a follower forwarded); with "any": true, one
        of the nodes' does (a collection's group's leader, which any voter may be)."""
        targets = self.call_targets(spec["node"])
        want = spec["record"]
        groups = [targets] if spec.get("any") else [[t] for t in targets]
        for group in groups:
            deadline = time.monotonic() + spec.get("within_s", 0)
            while not self.audit_found(group, want):
                if time.monotonic() > deadline:
                    raise StepFailed(f"no audit record {want} on node {' or '.join(map(str, group))}")
                time.sleep(0.5)

    def audit_found(self, targets, want):
        for target in targets:
            line = node_mcp.NodeLine(self.state()["node"][target]["serial"], timeout=5)
            try:
                audit = line.read("audit://log")
            finally:
                line.close()
            found = [d for d in audit["decisions"] if all(d.get(k) == v for k, v in want.items())]
            if found:
                self.say(f"  audited on node {target}: {json.dumps(found[0])[:200]}")
                return True
        return False

    def refused(self, spec):
        rogue = self.state()["node"][spec["rogue"]]
        rogue_name = rogue["name"]

        def check(views):
            for name, v in views.items():
                if any(m["name"] == rogue_name for m in v["members"]):
                    raise StepFailed(f"{name} lists the rogue {rogue_name} as a member")
            refused = {name: v["counters"]["bad_mac"] for name, v in views.items()}
            return all(refused.values()), refused
        self.poll(spec.get("within_s", 10), self.honest(), check, f"every honest node refused {rogue_name}'s datagrams")
        first = self.honest()[0]
        line = node_mcp.NodeLine(first["serial"], timeout=5)
        try:
            audit = line.read("audit://log")
            log = line.call("kernel_log", {"limit": 200, "min_level": "warning"})
        finally:
            line.close()
        source = rogue["address"]
        peers = [d for d in audit["decisions"] if d["kind"] == "peer" and d["name"] == source]
        if not peers or peers[0]["outcome"] != "deny" or peers[0]["code"] != "bad_mac":
            raise StepFailed(f"no audit record of {source} refused on {first['name']}: {peers}")
        if not any(source in r["text"] and "bad_mac" in r["text"] for r in log["records"]):
            raise StepFailed(f"no kernel log line about {source} on {first['name']}")
        self.say(f"  {rogue_name} ({source}) refused by every honest node; audited on {first['name']} "
                 f"({sum(p['repeats'] for p in peers)} refusals in {len(peers)} records)")

    def consensus(self, spec):
        voters = list(range(self.scenario.get("raft", 0)))
        which = spec.get("nodes", "voters")
        which = (voters if which == "voters" else [v for v in voters if v != self.downed] if which == "voters_left"
                 else [v for v in which if v != self.downed])
        nodes = self.honest(which)
        before = self.leader if spec.get("new_leader") else None
        agreed = {}

        def check(views):
            seen = {name: (v.get("consensus", {}).get("leader_address"), v.get("consensus", {}).get("term"),
                           v.get("consensus", {}).get("role")) for name, v in views.items()}
            leaders = {s[0] for s in seen.values()}
            terms = {s[1] for s in seen.values()}
            if len(leaders) != 1 or len(terms) != 1 or None in leaders or None in terms:
                return False, seen
            address, term = leaders.pop().split(":")[0], terms.pop()
            node = next((n["id"] for n in self.state()["node"] if n["address"] == address), None)
            roles = sorted(s[2] for s in seen.values())
            if node is None or roles.count("leader") != (1 if any(n["id"] == node for n in nodes) else 0):
                return False, seen
            if spec.get("leader_among") and not any(n["id"] == node for n in nodes):
                return False, seen  # (a leader outside the list, e.g. just killed, does not count)
            if before is not None and (node == before[0] or term <= before[1]):
                return False, seen
            agreed["leader"] = (node, term)
            return True, seen
        what = f"{[n['name'] for n in nodes]} agree on one leader and term" + (
            f" (not node-{before[0]}, term above {before[1]})" if before else "")
        self.poll(spec.get("within_s", 30), nodes, check, what)
        self.leader = agreed["leader"]
        self.say(f"  leader node-{self.leader[0]}, term {self.leader[1]}")

    def fault_leader(self, how):
        if how in ("restart", "resume"):
            if self.downed is None:
                raise StepFailed(f"fault_leader {how} before a fault_leader took a leader down")
            self.fault([how, str(self.downed)])
            self.restarted = (self.downed, self.downed_term) if how == "restart" else None
            self.downed = None
            return
        if self.leader is None:
            raise StepFailed("fault_leader before any consensus step agreed on a leader")
        self.downed, self.downed_term = self.leader
        self.fault([how, str(self.downed)])

    def recovered(self, spec):
        if self.restarted is None:
            raise StepFailed("recovered before a fault_leader restart")
        node_id, led_term = self.restarted
        node = self.state()["node"][node_id]
        deadline = time.monotonic() + spec.get("within_s", 20)
        texts = []
        while True:
            try:
                texts, since = [], 0
                for _ in range(20):  # the boot's lines, a page at a time
                    log = node_mcp.call(node["serial"], "kernel_log", {"since": since, "limit": 200, "min_level": "info"},
                                        timeout=10)
                    texts += [r["text"] for r in log["records"]]
                    if not log["records"]:
                        break
                    since = log["next"]
            except (node_mcp.NodeError, OSError):  # the node still boots: its line is not there yet
                texts = []
            member = next((m for m in map(re.compile(r"its state recovered \(term (\d+), (\d+) entries\)").search, texts)
                           if m), None)
            groups = next((m for m in map(re.compile(
                r"Raft groups' state is back \((\d+) bytes from the checkpoint, (\d+) records from the log\)").search,
                texts) if m), None)
            if member and groups:
                break
            if time.monotonic() > deadline:
                raise StepFailed(f"node-{node_id} logged no recovered consensus state: {texts[-12:]}")
            time.sleep(0.5)
        term, entries = int(member.group(1)), int(member.group(2))
        from_checkpoint, records = int(groups.group(1)), int(groups.group(2))
        if term < led_term or entries < 1:
            raise StepFailed(f"node-{node_id} came back with term {term} and {entries} entries; it led in term {led_term}")
        status = (self.view(node) or {}).get("consensus", {})
        if status.get("storage") != "disk" or status.get("recovered") != {"term": term, "entries": entries}:
            raise StepFailed(f"node-{node_id}'s cluster_status does not say what its log says: {status}")
        if spec.get("from_checkpoint") and from_checkpoint == 0:
            raise StepFailed(f"node-{node_id}'s state came back from the log alone ({records} records): no checkpoint held it")
        self.say(f"  node-{node_id} took up term {term} and {entries} entries from its disk "
                 f"({from_checkpoint} bytes from a checkpoint, {records} records from the log)")

    def step(self, i, step):
        (kind, arg), = step.items()
        self.say(f"step {i}: {kind} {json.dumps(arg)}")
        if kind in ("converged", "expect", "hold", "call", "refused", "consensus", "fault_leader", "recovered",
                    "audited"):
            getattr(self, kind)(arg)
        elif kind == "fault":
            self.fault(arg.split())
        elif kind == "heal":
            self.swarm.heal(argparse.Namespace(run=self.run))
        elif kind == "sleep":
            time.sleep(float(arg))
        else:
            raise StepFailed(f"unknown step '{kind}'")

    def fault(self, words):
        if words[:1] == ["link"] and words[1:3] == ["*", "*"]:
            for link in self.links():
                self.swarm.fault(argparse.Namespace(run=self.run, what="link",
                                                    rest=[str(link["a"]), str(link["b"]), words[3]]))
            return
        self.swarm.fault(argparse.Namespace(run=self.run, what=words[0], rest=words[1:]))

    def links(self):
        from fabric_control import FabricControl
        control = FabricControl(os.path.join(self.swarm.state_dir(self.run), "control.sock"))
        try:
            return control(cmd="stats")["links"]
        finally:
            control.close()


def free_udp_base(count):
    """A UDP port on 127.0.0.1 with `count` free ones from it (the fabric's --udp base)."""
    import socket
    for _ in range(50):
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.bind(("127.0.0.1", 0))
        base = probe.getsockname()[1]
        probe.close()
        held = []
        try:
            for p in range(base, base + count):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                held.append(s)
                s.bind(("127.0.0.1", p))
            return base
        except OSError:
            continue
        finally:
            for s in held:
                s.close()
    raise StepFailed("no run of free UDP ports for the fabric")


def run(swarm, args):
    with open(args.scenario) as f:
        scenario = json.load(f)
    seed = args.seed if args.seed is not None else scenario.get("seed", 1)
    # As `swarm up` would be asked, so every option not in the scenario keeps up's own default.
    argv = ["up", "--nodes", str(scenario["nodes"]), "--topology", scenario.get("topology", "mesh"),
            "--seed", str(seed), "--memory", scenario.get("memory", "32M"), "--run", args.run,
            "--period-ms", str(scenario.get("period_ms", 0)), "--suspicion", str(scenario.get("suspicion", 0)),
            "--stagger-ms", str(scenario.get("stagger_ms", 0)),
            "--rogue", ",".join(str(n) for n in scenario.get("rogue", [])), "--raft", str(scenario.get("raft", 0)),
            "--append", scenario.get("append", "")]
    if scenario.get("disks"):  # every node on a disk of its own (a voter's replacement keeps its log)
        argv.append("--disks")
    if scenario.get("udp_nodes"):  # nodes attached to the fabric over UDP, as on another machine
        argv += ["--udp", f"127.0.0.1:{free_udp_base(scenario['nodes'])}",
                 "--udp-nodes", ",".join(str(n) for n in scenario["udp_nodes"])]
    up = swarm.parser().parse_args(argv)
    runner = Runner(swarm, scenario, args.run)
    runner.say(f"scenario {args.scenario}: {up.nodes} nodes, {up.topology}, seed {seed}")
    failed = None
    try:
        swarm.up(up)
        for i, step in enumerate(scenario.get("steps", []), 1):
            runner.step(i, step)
    except StepFailed as e:
        failed = str(e)
        why = runner.diagnose()
        if why:
            failed += "\n" + why
    except SystemExit as e:  # a swarm command refused
        failed = str(e)
    finally:
        if not args.keep and os.path.exists(os.path.join(swarm.state_dir(args.run), "swarm.json")):
            swarm.down(argparse.Namespace(run=args.run))
    if failed:
        runner.say(f"FAILED: {failed}")
        return 1
    runner.say(f"scenario held: {len(scenario.get('steps', []))} steps")
    return 0
