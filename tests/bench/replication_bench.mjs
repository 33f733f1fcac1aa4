// Replicated collections and federated search on a swarm (issue 35's figures; docs/benchmarks.md
// "Replication"): one swarm (`./basalt swarm up --nodes N --raft 3`), reached over each node's MCP
// Streamable HTTP with the official SDK client, measures
//   - acknowledged upserts/s into an unreplicated and into a replicated collection at the leader,
//     one client and four (one vector of 16 floats per call), and linearizable against local reads;
//   - linearizable reads at the leader and at a follower (a read index each) against local ones,
//     and reads at a node that holds no copy (served by a voter);
//   - federated search (scope "cluster") p50/p99 against a local search of the same collection,
//     every node holding `--vectors` vectors of its own, and how many ended partial;
//   - failover: the leader killed, time until the next write is acknowledged at another voter.
// Usage: node tests/bench/replication_bench.mjs [--nodes 5] [--seconds 5] [--vectors 500] [--searches 200]
//        [--append "BOOT ARGS"]
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { performance } from "node:perf_hooks";

import { Client, StreamableHTTPClientTransport, root } from "../mcp/sdk.mjs";

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const nodesWanted = arg("nodes", 5), seconds = arg("seconds", 5), vectors = arg("vectors", 500);
const searches = arg("searches", 200);
// --append "ARGS": boot arguments for every node (e.g. "raft_groups=0" to compare with every
// collection in group 0).
const append = process.argv.includes("--append") ? process.argv[process.argv.indexOf("--append") + 1] : "";
const run = `rbench-${process.pid}`;
const dir = path.join(root, "build/swarm", run);
const swarm = (...args) =>
  execFileSync("python3", [path.join(root, "qemu/swarm/swarm.py"), ...args, "--run", run], { encoding: "utf8" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function connect(cfg) {
  const client = new Client({ name: "basalt-replication-bench", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(cfg.url), { requestInit: { headers: cfg.headers } }));
  return client;
}
async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 20000 });
  if (r.isError)
    throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content).slice(0, 300)}`);
  return r.structuredContent;
}
const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
let seed = 7;
const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
const vector = (dim) => Array.from({ length: dim }, () => Math.round(random() * 1024) / 1024);

async function leaderOf(clients, voters) {
  for (let tries = 0; tries < 200; ++tries) {
    const seen = new Set();
    for (const v of voters) {
      try {
        seen.add((await call(clients[v], "cluster_status", {})).consensus?.leader ?? 0);
      } catch {
        seen.add(-1);
      }
    }
    if (seen.size === 1 && [...seen][0] > 0)
      return [...seen][0] - 1;
    await sleep(100);
  }
  throw new Error("no leader agreed");
}

// Upserts for `seconds` from `writers` clients at once: acknowledged calls per second.
async function upsertRate(clientsOf, collection, writers) {
  const stopAt = performance.now() + seconds * 1000;
  let done = 0, next = 1;
  await Promise.all(Array.from({ length: writers }, async (_, w) => {
    while (performance.now() < stopAt) {
      await call(clientsOf(w), "vector_upsert", { collection, ids: [next++], vectors: [vector(16)] });
      ++done;
    }
  }));
  return done / seconds;
}
async function latencies(client, args, count, tool = "vector_search") {
  const ms = [];
  for (let i = 0; i < count; ++i) {
    const t = performance.now();
    await call(client, tool, tool === "vector_search" ? { ...args, vector: vector(16) } : args);
    ms.push(performance.now() - t);
  }
  return { p50: percentile(ms, 50), p99: percentile(ms, 99) };
}

const rows = [];
try {
  swarm("up", "--nodes", String(nodesWanted), "--raft", "3", ...(append ? ["--append", append] : []));
  const servers = Object.values(JSON.parse(fs.readFileSync(path.join(dir, "clients.json"), "utf8")).mcpServers);
  const clients = await Promise.all(servers.map(connect));
  const voters = [0, 1, 2];
  let leader = await leaderOf(clients, voters);
  const lead = clients[leader];
  const writersAtLeader = await Promise.all([0, 1, 2, 3].map(() => connect(servers[leader])));
  await call(lead, "collection_create", { name: "plain", dim: 16, metric: "l2", max_elements: 10000 });
  await call(lead, "collection_create", { name: "repl", dim: 16, metric: "l2", max_elements: 10000, replicas: 3 });
  for (const [name, writers] of [["plain", 1], ["repl", 1], ["plain", 4], ["repl", 4]])
    rows.push([`upserts/s, ${name === "repl" ? "replicated (3)" : "unreplicated"}, ${writers} client${writers > 1 ? "s" : ""}`,
               (await upsertRate((w) => writersAtLeader[w], name, writers)).toFixed(1)]);
  // At a voter of the collection's group that does not lead it (its creator, the leader here, does):
  // each change forwarded to the leader, answered once this voter has applied it.
  const placement = (await call(lead, "cluster_status", {})).consensus.collections.find((c) => c.name === "repl").voters;
  const groupFollower = clients.findIndex((_, n) => n !== leader && placement.includes(`10.10.0.${n + 1}`));
  const atFollower = await upsertRate(() => clients[groupFollower], "repl", 1);
  rows.push([`upserts/s, replicated (3), 1 client at node-${groupFollower} (a follower of its group)`,
             `${atFollower.toFixed(1)} (${(1000 / atFollower).toFixed(1)} ms each)`]);
  const follower = voters.find((v) => v !== leader);
  for (const [where, node, consistency] of [["the leader", leader, "linearizable"], ["a follower", follower, "linearizable"],
                                            ["a follower", follower, "local"]]) {
    const l = await latencies(clients[node], { collection: "repl", k: 10, consistency }, searches);
    rows.push([`vector_search of the replicated one at ${where}, ${consistency}: p50 / p99 ms`,
               `${l.p50.toFixed(1)} / ${l.p99.toFixed(1)}`]);
  }
  // From a node that holds no copy (the placement is the leader and two others of the lowest
  // addresses: the last node is outside it), served by one of the voters.
  const placed = (await call(lead, "cluster_status", {})).consensus.collections.find((c) => c.name === "repl").voters;
  const outside = clients.findIndex((_, n) => !placed.includes(`10.10.0.${n + 1}`));
  if (outside >= 0)
    for (const [tool, args] of [["vector_search", { k: 10 }], ["vector_search", { k: 10, consistency: "local" }],
                                ["vector_get", { ids: [1, 2, 3] }]]) {
      const l = await latencies(clients[outside], { collection: "repl", ...args }, searches, tool);
      rows.push([`${tool} at node-${outside} (no copy)${args.consistency ? ", local" : ", linearizable"}: p50 / p99 ms`,
                 `${l.p50.toFixed(1)} / ${l.p99.toFixed(1)}`]);
    }

  // Federated search: every node a collection of its own.
  for (const c of clients) {
    await call(c, "collection_create", { name: "fed", dim: 16, metric: "l2", max_elements: vectors + 16 });
    for (let i = 0; i < vectors; i += 64) {
      const n = Math.min(64, vectors - i);
      await call(c, "vector_upsert", { collection: "fed", ids: Array.from({ length: n }, (_, j) => i + j),
                                       vectors: Array.from({ length: n }, () => vector(16)) });
    }
  }
  const local = await latencies(clients[0], { collection: "fed", k: 10 }, searches);
  const fedBefore = (await call(clients[0], "cluster_status", {})).federation;
  const fed = await latencies(clients[0], { collection: "fed", k: 10, scope: "cluster" }, searches);
  const fedAfter = (await call(clients[0], "cluster_status", {})).federation;
  rows.push([`vector_search, local (${vectors} vectors): p50 / p99 ms`, `${local.p50.toFixed(1)} / ${local.p99.toFixed(1)}`]);
  rows.push([`vector_search, scope cluster (${clients.length} nodes x ${vectors}): p50 / p99 ms`,
             `${fed.p50.toFixed(1)} / ${fed.p99.toFixed(1)}`]);
  rows.push([`  of which partial (a node missed the deadline)`,
             `${fedAfter.partial - fedBefore.partial} of ${fedAfter.searches - fedBefore.searches}`]);

  // Failover: the leader killed; a write retried at another voter until one is acknowledged.
  const survivor = voters.find((v) => v !== leader);
  const killedAt = performance.now();
  swarm("fault", "kill", String(leader));
  let id = 1_000_000;
  for (;;) {
    try {
      await call(clients[survivor], "vector_upsert", { collection: "repl", ids: [id++], vectors: [vector(16)] });
      break;
    } catch {
      await sleep(20);
    }
  }
  rows.push(["failover: leader killed -> next acknowledged write, s", ((performance.now() - killedAt) / 1000).toFixed(2)]);
} catch (e) {
  console.error(`FAIL: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  try {
    swarm("down");
  } catch {
    // (already down)
  }
}
console.log(`replication on a swarm of ${nodesWanted} nodes (3 voters), ${seconds} s per rate:`);
for (const [what, value] of rows)
  console.log(`  ${what.padEnd(72)} ${value}`);
process.exit(process.exitCode ?? 0);
