// A swarm's nodes over MCP Streamable HTTP from the host: `./basalt swarm up` gives every node an
// HTTP port of its own on 127.0.0.1 (a second NIC on a QEMU user network beside its fabric NIC)
// and writes clients.json; the official SDK client, configured from that file, reaches each node
// with the run's admin key and hears each one's own view of the cluster; cluster_ping crosses the
// fabric; callers without the key or with a wrong one get nothing; a node killed and restarted
// answers again on the same URL and rejoins; `down` closes every port and process. Node 2 is
// attached to the fabric over UDP (`--udp`, as a node on another machine would be), over loopback.
// Usage: node swarm_http_test.mjs KERNEL_ELF (the swarm boots build/kernel/basalt.elf)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import dgram from "node:dgram";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";

import { Client, StreamableHTTPClientTransport, root } from "./sdk.mjs";

const run = `http-${process.pid}`;
const dir = path.join(root, "build/swarm", run);
const swarm = (...args) =>
  execFileSync("python3", [path.join(root, "qemu/swarm/swarm.py"), ...args, "--run", run], { encoding: "utf8" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const timer = setTimeout(() => {
  console.error("FAIL: timed out");
  cleanup();
  process.exit(1);
}, 170000);

function cleanup() {
  if (fs.existsSync(path.join(dir, "swarm.json"))) {
    try {
      swarm("down");
    } catch (e) {
      console.error(`down: ${e}`);
    }
  }
}

async function connect(url, headers) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
  const client = new Client({ name: "basalt-swarm-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

// Polls a node's own cluster_status until `want` holds (the protocol converges in about a second).
async function until(client, want, ms, what) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = (await client.callTool({ name: "cluster_status", arguments: {} })).structuredContent;
    if (want(last))
      return last;
    await sleep(250);
  }
  assert.fail(`${what}: last view ${JSON.stringify(last)}`);
}

const portOpen = (port) =>
  new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => {
      s.destroy();
      resolve(true);
    });
    s.on("error", () => resolve(false));
  });

// Running, not a zombie waiting for a parent that is not this process.
function alive(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

// A base port with three free UDP ports above it on 127.0.0.1 (for the fabric's --udp).
async function freeUdpBase(count = 3) {
  const bind = (port) =>
    new Promise((resolve) => {
      const s = dgram.createSocket("udp4");
      s.once("error", () => resolve(null));
      s.bind(port, "127.0.0.1", () => resolve(s));
    });
  for (let tries = 0; tries < 50; ++tries) {
    const probe = await bind(0);
    const base = probe.address().port;
    probe.close();
    if (base + count > 65535)
      continue;
    const held = [];
    for (let p = base; p < base + count; ++p)
      held.push(await bind(p));
    held.forEach((s) => s && s.close());
    if (held.every(Boolean))
      return base;
  }
  throw new Error("no run of free UDP ports");
}

let pids = [];
try {
  const t0 = Date.now();
  const udpBase = await freeUdpBase();
  const printed = swarm("up", "--nodes", "3", "--topology", "ring", "--udp", `127.0.0.1:${udpBase}`, "--udp-nodes", "2");
  const state = JSON.parse(fs.readFileSync(path.join(dir, "swarm.json"), "utf8"));
  pids = [state.fabric, ...state.node.map((n) => n.pid)];
  const clientsPath = path.join(dir, "clients.json");
  assert.equal(fs.statSync(clientsPath).mode & 0o777, 0o600, "clients.json holds the admin key: the owner's only");
  const servers = JSON.parse(fs.readFileSync(clientsPath, "utf8")).mcpServers;
  assert.deepEqual(Object.keys(servers), ["node-0", "node-1", "node-2"]);
  const ports = new Set();
  for (const [name, cfg] of Object.entries(servers)) {
    assert.equal(cfg.type, "http");
    assert.match(cfg.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    assert.ok(printed.includes(cfg.url), `up prints ${name}'s URL`);
    ports.add(new URL(cfg.url).port);
  }
  assert.equal(ports.size, 3, "a port per node");
  const status = JSON.parse(swarm("status", "--json"));
  assert.equal(`Bearer ${status.admin_key}`, servers["node-0"].headers.Authorization, "status --json carries the admin key");
  assert.deepEqual(status.nodes.map((n) => n.url), Object.values(servers).map((s) => s.url));
  assert.ok(printed.includes(`remote.host=127.0.0.1,remote.port=${udpBase}+N`), "up says how a node elsewhere joins");

  // Each node, as configured: its own name, then all three alive in its own view.
  const clients = {};
  for (const [name, cfg] of Object.entries(servers))
    clients[name] = await connect(cfg.url, cfg.headers);
  let views = {};
  for (const [name, client] of Object.entries(clients)) {
    assert.equal(client.getServerVersion().name, "basalt");
    views[name] = await until(client, (v) => v.counts.alive === 3, 20000, `${name} never saw three alive members`);
    assert.equal(views[name].node, name, "each URL reaches its own node");
  }
  const convergedMs = Date.now() - t0;
  assert.deepEqual(Object.values(views).map((v) => v.address), ["10.10.0.1:7946", "10.10.0.2:7946", "10.10.0.3:7946"],
                   "the cluster runs on the fabric NIC (vn0), not the host's user network");

  // Over the fabric: node 0 probes node 2.
  const ping = (await clients["node-0"].callTool({ name: "cluster_ping", arguments: { node: "node-2" } })).structuredContent;
  assert.equal(ping.answered, true, JSON.stringify(ping));
  assert.ok(ping.rtt_us > 0, JSON.stringify(ping));
  const attached = JSON.parse(swarm("status", "--json")).nodes.map((n) => n.fabric_port);
  assert.equal(attached[0], "unix");
  assert.match(attached[2], /^udp 127\.0\.0\.1:\d+$/, `node 2 attached over UDP: ${attached}`);
  const members = JSON.parse((await clients["node-1"].readResource({ uri: "cluster://members" })).contents[0].text);
  assert.deepEqual(members.members.map((m) => m.name).sort(), ["node-0", "node-1", "node-2"]);

  // Without the key a caller is anonymous and may not read the cluster; a wrong key is refused.
  const guest = await connect(servers["node-0"].url, {});
  const refused = await guest.callTool({ name: "cluster_status", arguments: {} }).then(
    (r) => (r.isError ? r : assert.fail(`an anonymous caller read the cluster: ${JSON.stringify(r)}`)),
    (e) => e);
  assert.ok(refused, "anonymous refused");
  await guest.close();
  await assert.rejects(connect(servers["node-1"].url, { Authorization: "Bearer not-the-run-key-0123456789" }),
                       (e) => e.code === 403 && /auth_invalid_api_key/.test(e.message), "a wrong key");

  // Node 2 killed: node 0 hears it over the fabric; restarted, node 2 answers on the same URL and
  // rejoins with a higher incarnation.
  const seen = (view) => view.members.find((m) => m.name === "node-2");
  const before = seen(views["node-0"]).incarnation;
  const restartsBefore = views["node-0"].counters.restarts;
  await clients["node-2"].close();
  swarm("fault", "kill", "2");
  await until(clients["node-0"], (v) => v.members.some((m) => m.name === "node-2" && m.state !== "alive"), 20000,
              "node 0 never suspected the killed node 2");
  swarm("fault", "restart", "2");
  let again;
  const deadline = Date.now() + 30000;
  while (!again && Date.now() < deadline) {
    try {
      again = await connect(servers["node-2"].url, servers["node-2"].headers);
    } catch {
      await sleep(300);
    }
  }
  assert.ok(again, "node 2 never answered on its URL after the restart");
  const rejoined = await until(again, (v) => v.counts.alive === 3, 20000, "node 2 did not rejoin");
  assert.equal(rejoined.node, "node-2");
  const after = await until(clients["node-0"], (v) => v.members.every((m) => m.state === "alive"), 20000,
                            "node 0 never saw node 2 alive again");
  // A restarted node comes back as a later boot (its boot id only grows): node 0 counts the restart
  // and takes it as alive at whatever incarnation it claims, whatever it was held dead at.
  assert.ok(after.counters.restarts > restartsBefore,
            `node 0 counted node 2's restart: restarts ${restartsBefore} -> ${after.counters.restarts}`);
  await again.close();
  const restarted = JSON.parse(fs.readFileSync(path.join(dir, "swarm.json"), "utf8"));
  pids = [restarted.fabric, ...restarted.node.map((n) => n.pid)];
  for (const name of ["node-0", "node-1"])
    await clients[name].close();

  swarm("down");
  for (const port of ports)
    assert.equal(await portOpen(Number(port)), false, `port ${port} still open after down`);
  for (const pid of pids)
    assert.equal(alive(pid), false, `process ${pid} left running`);
  assert.equal(fs.existsSync(dir), false, "down left the run's state");
  console.log(`swarm over HTTP: 3 nodes on their own 127.0.0.1 ports, each reached with clients.json and ` +
              `its own view served (${convergedMs} ms from up to three views converged); cluster_ping to node 2 (on the fabric over UDP) ` +
              `${ping.rtt_us} us; anonymous and wrong-key callers refused; node 2 killed, restarted, rejoined on its URL ` +
              `(incarnation ${before} -> ${seen(after).incarnation}); down closed every port; ${Date.now() - t0} ms in all`);
  clearTimeout(timer);
} catch (e) {
  console.error("FAIL:", e);
  cleanup();
  process.exit(1);
}
