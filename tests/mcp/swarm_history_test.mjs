// A replicated collection under the swarm's faults, judged by what its clients saw (issue 35;
// docs/swarm.md "Checking what clients saw"): five nodes, the first three the consensus group on
// disks of their own (snapshots every 16 changes, so a voter that falls behind catches up from one);
// a collection with replicas: 3; one official-SDK client per node over Streamable HTTP (the two
// outside the group read and write through the collection's voters) streams upserts, deletes and
// reads of a dozen ids, each write a vector of its own, every operation
// recorded (tests/history); meanwhile the leader is killed and restarted, the next leader is cut off
// in a minority partition and healed, every link loses 30 % of its frames for a while, and every
// voter is killed and restarted at once. Afterwards the whole collection is read at the leader and
// the history must be linearizable as a map from ids to vectors, every acknowledged upsert readable,
// no acknowledged delete back, nothing applied twice; every voter then holds the same map.
// Usage: node swarm_history_test.mjs KERNEL_ELF [SECONDS] (the swarm boots build/kernel/basalt.elf)
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

import { History, checkHistory } from "../history/checker.mjs";
import { postHealChecks } from "../history/post_heal.mjs";
import { vectorClient } from "../history/vector_client.mjs";
import { Client, StreamableHTTPClientTransport, root } from "./sdk.mjs";

const seconds = Number(process.argv[3] ?? 30);
const run = `hist-${process.pid}`;
const dir = path.join(root, "build/swarm", run);
const swarm = (...args) =>
  execFileSync("python3", [path.join(root, "qemu/swarm/swarm.py"), ...args, "--run", run], { encoding: "utf8" });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const timer = setTimeout(() => {
  console.error("FAIL: timed out");
  cleanup();
  process.exit(1);
}, (seconds + 200) * 1000);

function cleanup() {
  if (fs.existsSync(path.join(dir, "swarm.json"))) {
    try {
      swarm("down");
    } catch (e) {
      console.error(`down: ${e}`);
    }
  }
}

// A node's client, connected again after its node was restarted (a new session on the same URL).
class NodeClient {
  constructor(url, headers) {
    this.url = url;
    this.headers = headers;
    this.client = null;
  }
  async call(name, args) {
    if (!this.client) {
      const transport = new StreamableHTTPClientTransport(new URL(this.url), { requestInit: { headers: this.headers } });
      const client = new Client({ name: "basalt-history", version: "1.0.0" });
      await client.connect(transport, { timeout: 5000 });
      this.client = client;
    }
    try {
      return await this.client.callTool({ name, arguments: args }, undefined, { timeout: 15000 });
    } catch (e) {
      const stale = this.client;
      this.client = null; // (the next call connects again)
      stale.close().catch(() => {});
      throw e;
    }
  }
}

const structured = async (node, name, args) => {
  const r = await node.call(name, args);
  if (r.isError)
    throw new Error(`${name}: ${JSON.stringify(r.structuredContent ?? r.content)}`);
  return r.structuredContent;
};

// The leader every voter that answers agrees on (raft id; node index = id - 1), or 0.
async function agreedLeader(nodes, voters) {
  const seen = new Set();
  for (const v of voters) {
    try {
      const s = await structured(nodes[v], "cluster_status", {});
      seen.add(s.consensus?.leader ?? 0);
    } catch {
      // (a node down says nothing)
    }
  }
  return seen.size === 1 ? [...seen][0] : 0;
}
async function waitLeader(nodes, voters, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    const leader = await agreedLeader(nodes, voters);
    if (leader)
      return leader;
    assert.ok(Date.now() < deadline, `no leader agreed by voters ${voters}`);
    await sleep(300);
  }
}

// Every voter that answers knows a leader of the collection's own Raft group (raft_groups=1).
async function waitGroupLeader(nodes, voters, ms) {
  const deadline = Date.now() + ms;
  for (;;) {
    let known = 0;
    for (const v of voters) {
      try {
        const s = await structured(nodes[v], "cluster_status", {});
        if (s.consensus?.collections?.[0]?.member?.leader)
          known += 1;
      } catch {
        // (a node down says nothing)
      }
    }
    if (known === voters.length)
      return;
    assert.ok(Date.now() < deadline, `the collection's group has no leader known to voters ${voters}`);
    await sleep(300);
  }
}

const IDS = 12;
let written = 0; // each write its own vector, exact in a float32
const vectorFor = (client, id) => [client, ++written / 1024, id, 1];

async function workload(history, name, node, stopAt, seed) {
  let state = seed;
  const random = () => ((state = (state * 1103515245 + 12345) % 2147483648) / 2147483648);
  const client = vectorClient(history, name, "h", (tool, args) => node.call(tool, args));
  const counts = { ok: 0, failed: 0 };
  while (Date.now() < stopAt) {
    const id = Math.floor(random() * IDS);
    const pick = random();
    try {
      if (pick < 0.45)
        await client.upsert([{ id, vector: vectorFor(seed, id) }]);
      else if (pick < 0.6)
        await client.delete([id]);
      else
        await client.get([id, (id + 1) % IDS]);
      ++counts.ok;
    } catch {
      ++counts.failed;
      await sleep(250); // (a node down or without a leader: not a busy loop)
    }
  }
  return counts;
}

try {
  const t0 = Date.now();
  swarm("up", "--nodes", "5", "--raft", "3", "--append", "raft_snapshot_every=16");
  const servers = JSON.parse(fs.readFileSync(path.join(dir, "clients.json"), "utf8")).mcpServers;
  const nodes = Object.values(servers).map((cfg) => new NodeClient(cfg.url, cfg.headers));
  const voters = [0, 1, 2];
  let leader = await waitLeader(nodes, voters, 60000);
  console.log(`leader: node-${leader - 1} (${((Date.now() - t0) / 1000).toFixed(1)} s after up)`);
  await structured(nodes[leader - 1], "collection_create", { name: "h", dim: 4, metric: "l2", max_elements: 256, replicas: 3 });

  const history = new History();
  const start = Date.now();
  const stopAt = start + seconds * 1000;
  // One client per voter, and one on each node outside the consensus group (it holds no copy: its
  // reads are served by a voter after a read index, its writes carried to the collection's group).
  const clients = [0, 1, 2, 3, 4].map((v) => workload(history, `c${v}`, nodes[v], stopAt, v + 1));

  // The faults, while the clients run: (a) the leader killed, then restarted on its disk; (b) the
  // next leader cut off in a minority, then healed; (c) 30 % loss on every link; (d) every voter
  // killed and restarted at once.
  const at = (share) => sleep(Math.max(0, start + seconds * 1000 * share - Date.now()));
  const say = (what) => console.log(`t=${((Date.now() - start) / 1000).toFixed(1)} s: ${what}`);
  await at(0.15);
  const killed = leader - 1;
  swarm("fault", "kill", String(killed));
  say(`killed the leader node-${killed}`);
  await at(0.35);
  swarm("fault", "restart", String(killed));
  leader = await waitLeader(nodes, voters.filter((v) => v !== killed), 30000);
  say(`restarted node-${killed}; leader node-${leader - 1}`);
  await at(0.45);
  const cut = leader - 1;
  const others = [0, 1, 2, 3, 4].filter((n) => n !== cut);
  swarm("fault", "partition", String(cut), others.join(","));
  say(`leader node-${cut} cut off in a minority`);
  await at(0.6);
  swarm("heal");
  say("healed");
  await at(0.65);
  for (let a = 0; a < 5; ++a)
    for (let b = a + 1; b < 5; ++b)
      swarm("fault", "link", String(a), String(b), "loss=0.3");
  say("30 % loss on every link");
  await at(0.8);
  // (heal mends what a partition cut; a link's loss is set back by hand)
  for (let a = 0; a < 5; ++a)
    for (let b = a + 1; b < 5; ++b)
      swarm("fault", "link", String(a), String(b), "loss=0");
  swarm("heal");
  say("healed");
  await at(0.85);
  for (const v of voters)
    swarm("fault", "kill", String(v));
  for (const v of voters)
    swarm("fault", "restart", String(v));
  say("every voter killed and restarted at once");
  const counts = await Promise.all(clients);

  // After heal: every voter agrees again; the whole map read at the leader (a linearizable read).
  leader = await waitLeader(nodes, voters, 60000);
  await waitGroupLeader(nodes, voters, 60000);
  const reader = vectorClient(history, "final", "h", (tool, args) => nodes[leader - 1].call(tool, args));
  const ids = [...Array(IDS).keys()];
  // A read refused while the groups settle after the restart (no leader yet, or a read round not
  // confirmed in time) is tried again, a second apart, up to ten times: each refusal is recorded
  // as an unknown read and printed; an acknowledged write missing afterwards is what fails.
  let final;
  try {
    for (let attempt = 1; !final; ++attempt)
      try {
        final = await reader.readAll(ids);
      } catch (e) {
        if (attempt === 10 || !["unavailable"].includes(e.code))
          throw e;
        console.log(`final read, attempt ${attempt}: ${e.message}`);
        await sleep(1000);
      }
  } catch (e) {
    // What each voter's groups said then: which one could not confirm the read, and why.
    console.error(`final read refused: ${JSON.stringify(e.result?.structuredContent ?? e.result ?? String(e))}`);
    for (const v of voters)
      try {
        const c = (await structured(nodes[v], "cluster_status", {})).consensus;
        console.error(`node-${v}: group 0 ${JSON.stringify({ role: c?.role, term: c?.term, leader: c?.leader, commit: c?.commit })}; ` +
                      `collections ${JSON.stringify(c?.collections)}; replication ${JSON.stringify(c?.replication)}`);
      } catch (f) {
        console.error(`node-${v}: no status (${f})`);
      }
    throw e;
  }
  const byStatus = { ok: 0, fail: 0, unknown: 0 };
  for (const op of history.ops)
    byStatus[op.status === "pending" ? "unknown" : op.status] += 1;
  const verdict = checkHistory(history, { timeLimitMs: 60000 });
  const post = postHealChecks(history, final);
  if (verdict.linearizable !== true || !post.ok)
    fs.writeFileSync(path.join(root, "build", `history-${run}.json`), JSON.stringify(history));
  assert.equal(verdict.linearizable, true, `linearizable: ${verdict.text}`);
  assert.ok(post.ok, post.text);
  const writes = history.ops.filter((op) => op.kind === "upsert" && op.status === "ok").length;
  assert.ok(writes >= 10, `acknowledged upserts: ${writes}`);

  // Every voter's own copy is the same map (local reads once each has applied everything).
  const want = JSON.stringify(final.map(({ id, vector }) => [id, Array.from(vector)]).sort((a, b) => a[0] - b[0]));
  for (const v of voters) {
    const deadline = Date.now() + 30000;
    for (;;) {
      const got = [];
      for (let i = 0; i < IDS; i += 16) {
        const r = await structured(nodes[v], "vector_get", { collection: "h", ids: ids.slice(i, i + 16), consistency: "local" });
        got.push(...r.vectors.map(({ id, vector }) => [id, vector]));
      }
      if (JSON.stringify(got.sort((a, b) => a[0] - b[0])) === want)
        break;
      assert.ok(Date.now() < deadline, `node-${v}'s copy differs: ${JSON.stringify(got)} vs ${want}`);
      await sleep(500);
    }
  }
  for (const v of [3, 4])
    assert.ok(counts[v].ok > 0, `the client on node-${v} (outside the group) got answers: ${JSON.stringify(counts[v])}`);
  const status = await structured(nodes[killed], "cluster_status", {});
  console.log(`history: ${history.ops.length} operations (${byStatus.ok} ok, ${byStatus.fail} failed, ${byStatus.unknown} ` +
              `unknown) from ${counts.length} clients in ${seconds} s, ${writes} acknowledged upserts (${(writes / seconds).toFixed(1)}/s); ` +
              `linearizable (checked in ${verdict.elapsedMs} ms), post-heal checks hold; ${final.length} ids at the end, ` +
              `the same on every voter; the killed leader installed ${status.consensus.snapshot.installed} snapshot(s), ` +
              `caught up ${status.consensus.replication.catch_up.completed} time(s); clients ${JSON.stringify(counts)}`);
  clearTimeout(timer);
} catch (e) {
  console.error(`FAIL: ${e.stack ?? e}`);
  process.exitCode = 1;
} finally {
  cleanup();
  clearTimeout(timer);
}
