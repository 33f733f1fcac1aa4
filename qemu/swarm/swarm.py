#!/usr/bin/env python3
"""./basalt swarm: many Basalt nodes on QEMU virt, one machine, wired by basalt-fabric.

  ./basalt swarm up --nodes N [--topology mesh|ring|star|tree|line|FILE.json] [--seed S]
                    [--memory 32M] [--run NAME] [--http-port BASE] [--stagger-ms MS]
                    [--udp HOST:BASE [--udp-nodes 2,3]] [--raft 3|5] [--disks] [--append ARGS]
  ./basalt swarm status [--json] [--watch] [--run NAME]
  ./basalt swarm fault link A B down|up|loss=P|dup=P|delay=MS[,jitter=MS]|rate=KBPS [--run NAME]
  ./basalt swarm fault partition 0,1 2,3,4 | heal
  ./basalt swarm fault pause|resume|kill|restart NODE
  ./basalt swarm run SCENARIO.json [--seed S] [--keep]
  ./basalt swarm logs NODE [--follow] | graph [--out FILE.svg]
  ./basalt swarm down [--run NAME]

State lives in build/swarm/<run>/ (default run "default"): the fabric's sockets, each node's
serial line (serial-N.sock: newline-delimited JSON-RPC, the node boots with mcp=serial) and QMP
socket (qmp-N.sock), their logs, clients.json (an MCP client configuration for every node) and
swarm.json (what was started, with process ids and the run's secrets, the owner's only). The
swarm outlives this command; `down` stops everything it started and removes the state.

Each node has two NICs: vn0 on the fabric (10.10.0.(N+1)/16, the cluster's network) and vn1 on
a QEMU user network of its own (10.0.2.15) whose only way in is a host port forwarded to the
node's MCP over HTTP, on 127.0.0.1. Faults go to the fabric's control socket (links, partitions)
and to the nodes' QMP (pause, resume) or processes (kill, restart).

With --udp HOST:BASE the fabric also takes node N's frames on UDP port BASE+N of HOST, so a node
can run on another machine (`up` prints the -netdev it needs); --udp-nodes starts those local
nodes attached that way instead of through a unix socket.

With --raft N the first N nodes run the cluster's consensus group; every node then gets a disk of
its own (disk-N.img in the state directory, 16 MiB, kept across `fault restart`): a voter's term,
vote and log must outlive it, and any node may be chosen to hold a replicated collection.
--disks gives every node one without a consensus group."""
import argparse
import secrets
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

from fabric_control import FabricControl
import scenario
import views

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The optimized build (./basalt build: build/tools); build/host's is sanitized, for its tests.
FABRIC = os.path.join(ROOT, "build", "tools", "qemu", "swarm", "basalt-fabric")
KERNEL = os.path.join(ROOT, "build", "kernel", "basalt.elf")
DISK_BYTES = 16 << 20  # a node's disk: the 8 MiB the storage layer needs, with room for checkpoints


def state_dir(run):
    return os.path.join(ROOT, "build", "swarm", run)


def qmp(path, command):
    """One QMP command on a node's monitor socket; the answer's "return", or None."""
    try:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(2)
        s.connect(path)
        f = s.makefile("rw")
        f.readline()  # greeting
        for c in ({"execute": "qmp_capabilities"}, {"execute": command}):
            f.write(json.dumps(c) + "\n")
            f.flush()
            while True:
                msg = json.loads(f.readline())
                if "return" in msg or "error" in msg:
                    break
        s.close()
        return msg.get("return")
    except (OSError, ValueError):
        return None


def start_node(d, n, cmd):
    log = open(os.path.join(d, f"node-{n}.log"), "a")
    return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True, cwd=d).pid


def fabric_command(run, **kw):
    control = FabricControl(os.path.join(state_dir(run), "control.sock"))
    answer = control(**kw)
    control.close()
    if not answer.get("ok"):
        sys.exit(f"swarm: the fabric refused it: {answer.get('error')}")
    return answer


def save(state):
    # It holds the run's cluster secret and admin key: the owner's only.
    save_private(os.path.join(state_dir(state["run"]), "swarm.json"), state)


def node_of(state, text):
    if not text.isdigit() or int(text) >= len(state["node"]):
        sys.exit(f"swarm: no node {text} (0..{len(state['node']) - 1})")
    return state["node"][int(text)]


def fault(args):
    state = load(args.run)
    what = args.what
    if what == "link":
        if len(args.rest) != 3:
            sys.exit("swarm: fault link A B down|up|loss=P|dup=P|delay=MS[,jitter=MS]|rate=KBPS")
        a, b, change = args.rest
        kw = {"cmd": "link", "a": int(a), "b": int(b)}
        if change in ("down", "up"):
            kw["state"] = change
        else:
            for part in change.split(","):
                key, _, value = part.partition("=")
                if key in ("loss", "dup"):
                    kw[key] = float(value)
                elif key in ("delay", "jitter"):
                    kw[f"{key}_ms"] = int(value)
                elif key == "rate":
                    kw["rate_kbps"] = int(value)
                else:
                    sys.exit(f"swarm: unknown link change '{part}'")
        fabric_command(args.run, **kw)
    elif what == "partition":
        groups = [[int(n) for n in g.split(",") if n] for g in args.rest]
        fabric_command(args.run, cmd="partition", groups=groups)
    elif what in ("pause", "resume", "kill", "restart"):
        if len(args.rest) != 1:
            sys.exit(f"swarm: fault {what} NODE")
        node = node_of(state, args.rest[0])
        if what == "pause":
            qmp(node["qmp"], "stop")
            fabric_command(args.run, cmd="node", n=node["id"], state="paused")
        elif what == "resume":
            qmp(node["qmp"], "cont")
            fabric_command(args.run, cmd="node", n=node["id"], state="up")
        elif what == "kill":
            if views.process_alive(node["pid"]):
                os.kill(node["pid"], signal.SIGKILL)
            fabric_command(args.run, cmd="node", n=node["id"], state="down")
        else:
            if views.process_alive(node["pid"]):
                os.kill(node["pid"], signal.SIGKILL)
                deadline = time.monotonic() + 5
                while views.process_alive(node["pid"]) and time.monotonic() < deadline:
                    time.sleep(0.05)
            d = state_dir(args.run)
            for name in (f"node-{node['id']}.sock", f"serial-{node['id']}.sock", f"qmp-{node['id']}.sock"):
                if os.path.exists(os.path.join(d, name)):
                    os.remove(os.path.join(d, name))
            node["pid"] = start_node(d, node["id"], node["command"])
            save(state)
            fabric_command(args.run, cmd="node", n=node["id"], state="up")
    else:
        sys.exit("swarm: fault link|partition|pause|resume|kill|restart ...")
    print(f"swarm '{args.run}': {what} {' '.join(args.rest)}")


def heal(args):
    load(args.run)
    fabric_command(args.run, cmd="heal")
    print(f"swarm '{args.run}': healed")


def free_port(kind=socket.SOCK_STREAM):
    """A TCP (or UDP) port on 127.0.0.1 nobody uses now (the node's QEMU takes it a moment later)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        try:
            s.bind(("127.0.0.1", port))
            return True
        except OSError:
            return False


def http_ports(args):
    if not args.http_port:
        ports = []
        while len(ports) < args.nodes:
            p = free_port()
            if p not in ports:
                ports.append(p)
        return ports
    ports = list(range(args.http_port, args.http_port + args.nodes))
    if ports[-1] > 65535:
        sys.exit(f"swarm: --http-port {args.http_port} leaves no room for {args.nodes} nodes")
    taken = [p for p in ports if not port_free(p)]
    if taken:
        sys.exit(f"swarm: 127.0.0.1 ports {taken} are in use (pick another --http-port, or leave it out)")
    return ports


def parse_udp(text):
    host, _, port = text.rpartition(":")
    try:
        socket.inet_aton(host)
        base = int(port)
    except (OSError, ValueError):
        sys.exit(f"swarm: --udp wants HOST:BASE (an IPv4 address and a port), not '{text}'")
    return host, base


def client_config(state):
    """What an MCP client needs for each node: its URL and the run's admin key."""
    return {"mcpServers": {n["name"]: {"type": "http", "url": n["url"],
                                       "headers": {"Authorization": f"Bearer {state['admin_key']}"}}
                           for n in state["node"]}}


def save_private(path, data):
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        json.dump(data, f, indent=1)


def up(args):
    d = state_dir(args.run)
    if os.path.exists(os.path.join(d, "swarm.json")):
        sys.exit(f"swarm: run '{args.run}' is up already (./basalt swarm down --run {args.run})")
    if not 1 <= args.nodes <= 64:
        sys.exit("swarm: --nodes must be 1..64")
    # The run names the cluster (cluster=), which the kernel takes as 1..31 of A-Z a-z 0-9 . _ -:
    # any other name would leave every node without membership.
    if not re.fullmatch(r"[A-Za-z0-9._-]{1,31}", args.run):
        sys.exit(f"swarm: --run '{args.run}' must be 1..31 of A-Z a-z 0-9 . _ - (it names the cluster)")
    ports = http_ports(args)
    udp = parse_udp(args.udp) if args.udp else None
    over_udp = set(int(n) for n in args.udp_nodes.split(",") if n) if args.udp_nodes else set()
    if over_udp and not udp:
        sys.exit("swarm: --udp-nodes needs --udp HOST:BASE")
    if any(n >= args.nodes for n in over_udp):
        sys.exit(f"swarm: --udp-nodes names a node past {args.nodes - 1}")
    if args.raft > args.nodes:
        sys.exit(f"swarm: --raft {args.raft} needs at least {args.raft} nodes")
    for f in (FABRIC, KERNEL):
        if not os.path.exists(f):
            sys.exit(f"swarm: {f} is missing (./basalt build)")
    os.makedirs(d, exist_ok=True)
    fabric_log = open(os.path.join(d, "fabric.log"), "w")
    fabric_args = ["--dir", d, "--nodes", str(args.nodes), "--topology", args.topology, "--seed", str(args.seed)]
    if udp:
        fabric_args += ["--udp", f"{udp[0]}:{udp[1]}"]
    fabric = subprocess.Popen([FABRIC, *fabric_args], stdin=subprocess.DEVNULL, stdout=fabric_log, stderr=fabric_log,
                              start_new_session=True, cwd=d)
    for _ in range(100):
        if os.path.exists(os.path.join(d, "control.sock")) or fabric.poll() is not None:
            break
        time.sleep(0.05)
    if fabric.poll() is not None:
        sys.exit(f"swarm: the fabric did not start: {open(os.path.join(d, 'fabric.log')).read().strip()}")
    # The run's cluster secret: every node derives the cluster key from it (a rogue node gets
    # another, and must be refused by the rest).
    key = secrets.token_hex(16)
    # The run's admin key: every node accepts it over HTTP (callers without it are anonymous).
    admin = secrets.token_urlsafe(24)
    state = {"run": args.run, "nodes": args.nodes, "topology": args.topology, "seed": args.seed,
             "fabric": fabric.pid, "started": time.time(), "cluster": args.run, "cluster_key": key,
             "admin_key": admin, "node": []}
    rogue = set(int(n) for n in args.rogue.split(",") if n) if args.rogue else set()
    for n in range(args.nodes):
        boot = [f"ip=10.10.0.{n + 1}/16", "ip1=10.0.2.15/24", "mcp=serial", "http=80", f"key=admin:swarm:{admin}",
                f"node=node-{n}", f"cluster={args.run}", f"cluster_key={secrets.token_hex(16) if n in rogue else key}"]
        if args.period_ms:
            boot.append(f"cluster_period_ms={args.period_ms}")
        if args.suspicion:
            boot.append(f"cluster_suspicion={args.suspicion}")
        if args.raft:  # the cluster's consensus group: the first N nodes are its voters
            boot.append("raft_voters=" + ",".join(f"10.10.0.{v + 1}" for v in range(args.raft)))
        boot += args.append.split()  # the same extra boot arguments on every node
        if n in over_udp:  # as a node on another machine would be attached (but from 127.0.0.1)
            fabric_port = (f"dgram,id=n0,local.type=inet,local.host=127.0.0.1,local.port={free_port(socket.SOCK_DGRAM)},"
                           f"remote.type=inet,remote.host={udp[0]},remote.port={udp[1] + n}")
        else:
            fabric_port = (f"dgram,id=n0,local.type=unix,local.path={d}/node-{n}.sock,"
                           f"remote.type=unix,remote.path={d}/fabric-{n}.sock")
        cmd = ["qemu-system-aarch64", "-M", "virt,gic-version=3", "-cpu", "cortex-a72", "-m", args.memory, "-smp", "1",
               "-kernel", KERNEL, "-nic", "none", "-display", "none", "-monitor", "none",
               # vn1 (listed first: the device tree, which the kernel numbers by, has QEMU's last
               # device first): MCP over HTTP from the host; restrict=on, nothing goes out.
               "-netdev", f"user,id=h,restrict=on,hostfwd=tcp:127.0.0.1:{ports[n]}-10.0.2.15:80",
               "-device", "virtio-net-device,netdev=h",
               # vn0: the fabric.
               "-netdev", fabric_port,
               # Each its own MAC (QEMU gives every instance the same default one).
               "-device", f"virtio-net-device,netdev=n0,mac=52:54:00:0a:{n >> 8:02x}:{n & 255:02x}",
               "-device", "virtio-rng-device",
               # The MCP line is a virtio-serial port: QEMU holds a client's bytes until the kernel's
               # driver takes them, so nothing sent early is lost (a PL011 drops what it holds when
               # the kernel switches its FIFO on).
               "-chardev", f"socket,id=line,path={d}/serial-{n}.sock,server=on,wait=off",
               "-device", "virtio-serial-device,max_ports=2",
               "-device", "virtserialport,chardev=line,nr=1,name=org.basalt.line",
               # The console (kernel log, panics): kept, so a node whose line is silent can be examined.
               "-serial", f"file:{d}/console-{n}.log",
               "-qmp", f"unix:{d}/qmp-{n}.sock,server=on,wait=off",
               "-append", " ".join(boot)]
        # With a consensus group every node gets one: any live node may be chosen to hold a replicated
        # collection, and its vote in that collection's group must outlive it too.
        if args.disks or args.raft:  # sparse; the kernel formats it at its first boot
            disk = os.path.join(d, f"disk-{n}.img")
            with open(disk, "wb") as f:
                f.truncate(DISK_BYTES)
            cmd[-2:-2] = ["-drive", f"if=none,id=disk0,format=raw,file={disk},cache=writeback,discard=unmap",
                          "-device", "virtio-blk-device,drive=disk0"]
        if n and args.stagger_ms:  # a big swarm's boots spread out, so they do not all compete at once
            time.sleep(args.stagger_ms / 1000)
        state["node"].append({"id": n, "name": f"node-{n}", "pid": start_node(d, n, cmd), "address": f"10.10.0.{n + 1}",
                              "serial": f"{d}/serial-{n}.sock", "qmp": f"{d}/qmp-{n}.sock", "command": cmd,
                              "url": f"http://127.0.0.1:{ports[n]}/mcp", "rogue": n in rogue})
    save(state)
    clients = os.path.join(d, "clients.json")
    save_private(clients, client_config(state))
    # Back only when every node's line and monitor can be connected to (QEMU creates the
    # sockets as it starts), so the next command finds them.
    deadline = time.monotonic() + 30
    waiting = state["node"]
    while waiting and time.monotonic() < deadline:
        waiting = [n for n in waiting if views.process_alive(n["pid"]) and not (os.path.exists(n["serial"]) and os.path.exists(n["qmp"]))]
        time.sleep(0.05)
    dead = [n["id"] for n in state["node"] if not views.process_alive(n["pid"])]
    if dead or waiting:
        print(f"swarm: nodes {dead or [n['id'] for n in waiting]} did not start (see {d}/node-N.log)", file=sys.stderr)
    print(f"swarm '{args.run}': {args.nodes} nodes, {args.topology}, seed {args.seed}; state in {d}")
    print(f"  {'node':8} {'fabric':11} {'MCP over HTTP':32} MCP on the serial line (stdio)")
    for node in state["node"]:
        print(f"  {node['name']:8} {node['address']:11} {node['url']:32} "
              f"./basalt serial {os.path.relpath(node['serial'], ROOT)}")
    print(f"MCP clients: {os.path.relpath(clients, ROOT)} configures every node with the run's admin key "
          f"(Authorization: Bearer, also in ./basalt swarm status --json); node 0's entry:")
    first = state["node"][0]["name"]
    print("  " + json.dumps({"mcpServers": {first: client_config(state)["mcpServers"][first]}}))
    if udp:
        print(f"The fabric takes node N's frames on UDP {udp[0]}:{udp[1]}+N too: a node N on another machine joins with "
              f"-netdev dgram,id=n0,local.type=inet,local.host=ITS_ADDRESS,local.port=ANY,remote.type=inet,"
              f"remote.host={udp[0]},remote.port={udp[1]}+N (and the boot arguments in {os.path.relpath(d, ROOT)}/swarm.json)")


def load(run):
    path = os.path.join(state_dir(run), "swarm.json")
    if not os.path.exists(path):
        sys.exit(f"swarm: run '{run}' is not up")
    with open(path) as f:
        return json.load(f)


def status(args):
    state = load(args.run)
    views.status(state, state_dir(args.run), qmp, args.json, args.watch)


def logs(args):
    state = load(args.run)
    node = node_of(state, args.node)
    if not views.process_alive(node["pid"]):
        path = os.path.join(state_dir(args.run), f"node-{node['id']}.log")
        print(f"swarm: node {node['id']} is gone; its QEMU's output ({path}):", file=sys.stderr)
        with open(path) as f:
            sys.stdout.write(f.read())
        return
    views.logs(node, args.follow)


def graph(args):
    state = load(args.run)
    out = views.collect(state, state_dir(args.run), qmp, sample_s=0.1)
    path = views.graph(out, args.out or os.path.join(state_dir(args.run), "graph.svg"))
    print(f"swarm '{args.run}': {path}")


def down(args):
    d = state_dir(args.run)
    state = load(args.run)
    pids = [n["pid"] for n in state["node"]] + [state["fabric"]]
    for pid in pids:
        if views.process_alive(pid):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and any(views.process_alive(p) for p in pids):
        time.sleep(0.05)
    for pid in pids:
        if views.process_alive(pid):
            os.kill(pid, signal.SIGKILL)
    for name in os.listdir(d):
        os.remove(os.path.join(d, name))
    os.rmdir(d)
    print(f"swarm '{args.run}': down ({len(state['node'])} nodes and the fabric stopped, {d} removed)")


def parser():
    p = argparse.ArgumentParser(prog="basalt swarm", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    u = sub.add_parser("up")
    u.add_argument("--nodes", type=int, required=True)
    u.add_argument("--topology", default="mesh")
    u.add_argument("--seed", type=int, default=1)
    u.add_argument("--memory", default="32M")
    u.add_argument("--run", default="default")
    u.add_argument("--period-ms", type=int, default=0, help="membership protocol period (default 1000)")
    u.add_argument("--suspicion", type=int, default=0, help="suspicion timeout multiplier (default 5)")
    u.add_argument("--rogue", default="", help="nodes (0,3) that boot with a wrong cluster key")
    u.add_argument("--raft", type=int, default=0, choices=(0, 3, 5),
                   help="run the cluster's consensus group (Raft) with the first 3 or 5 nodes as voters")
    u.add_argument("--append", default="", help="more boot arguments for every node (e.g. checkpoint_kib=16)")
    u.add_argument("--disks", action="store_true",
                   help="every node gets a disk of its own (with --raft every node does)")
    u.add_argument("--stagger-ms", type=int, default=0, help="start the nodes this far apart (default 0: at once)")
    u.add_argument("--udp", default="", help="HOST:BASE: the fabric also takes node N's frames on UDP port BASE+N")
    u.add_argument("--udp-nodes", default="", help="nodes (2,3) started attached over --udp instead of a unix socket")
    u.add_argument("--http-port", type=int, default=0,
                   help="node N's MCP over HTTP on 127.0.0.1:BASE+N (default: free ports the system picks)")
    s = sub.add_parser("status")
    s.add_argument("--json", action="store_true")
    s.add_argument("--watch", action="store_true")
    s.add_argument("--run", default="default")
    lg = sub.add_parser("logs")
    lg.add_argument("node")
    lg.add_argument("--follow", "-f", action="store_true")
    lg.add_argument("--run", default="default")
    rn = sub.add_parser("run")
    rn.add_argument("scenario")
    rn.add_argument("--run", default="scenario")
    rn.add_argument("--seed", type=int, default=None)
    rn.add_argument("--keep", action="store_true", help="leave the swarm up afterwards")
    gr = sub.add_parser("graph")
    gr.add_argument("--out", default="")
    gr.add_argument("--run", default="default")
    dn = sub.add_parser("down")
    dn.add_argument("--run", default="default")
    fl = sub.add_parser("fault", help="link A B down|up|loss=P|dup=P|delay=MS[,jitter=MS]; partition 0,1 2,3; "
                                      "pause|resume|kill|restart NODE")
    fl.add_argument("what")
    fl.add_argument("rest", nargs="*")
    fl.add_argument("--run", default="default")
    hl = sub.add_parser("heal")
    hl.add_argument("--run", default="default")
    return p


def main():
    args = parser().parse_args()
    if args.command == "run":
        sys.exit(scenario.run(sys.modules[__name__], args))
    {"up": up, "status": status, "down": down, "fault": fault, "heal": heal, "logs": logs,
     "graph": graph}[args.command](args)


if __name__ == "__main__":
    main()
