// Concurrent callers share commits: eight SDK clients over HTTP (`./basalt run`'s path: passt and
// a disk image of the test's own), each on its own connection, make one-vector upserts through
// callTool() at the same time. A changing call is answered once the commit carrying its change
// and its audit record is durable, but the bridge does not wait for that commit: it serves the
// other calls meanwhile, so their changes and records join the next commit. Checked:
//   - every call is acknowledged, and the store holds exactly what was acknowledged;
//   - the commits written for the burst number at most 9/10 of its calls (about 6/10 measured here) (a bridge that blocks on
//     each call's commit writes one per call: every audit record is a commit of its own);
//   - QEMU killed with SIGKILL the moment the last answer arrives, then booted again on the same
//     image: every acknowledged vector is back, exactly.
// Usage: node shared_commits_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { bootHttp, Client, storageReady, storageStatus, StreamableHTTPClientTransport } from "./sdk.mjs";

const [kernel] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-shared-commits."));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const disk = path.join(dir, "disk.img");
fs.writeFileSync(disk, "");
fs.truncateSync(disk, 64 << 20);

const KEY = "shared-commits-key-0123456789abcdef";
const CALLERS = 8;
const PER_CALLER = 25;
const DIM = 16;
const row = (id) => Array.from({ length: DIM }, (_, k) => id + k / 16);

async function connect(url) {
  const client = new Client({ name: "shared-commits", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url),
                                                         { requestInit: { headers: { Authorization: `Bearer ${KEY}` } } }));
  return client;
}

async function boot() {
  // No checkpoint (it would empty the log whose commits the second boot counts).
  return bootHttp(["--disk", disk, "--key", `admin:root:${KEY}`, "--append", "checkpoint_kib=16384"],
                  { kernel, timeoutMs: 120000 });
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r).slice(0, 400)}`);
  return r.structuredContent;
}

let node;
const timer = setTimeout(() => {
  console.error("FAIL: timed out\n--- console ---\n" + (node ? node.log().slice(-3000) : ""));
  node?.stop().finally(() => process.exit(1));
}, 240000);

try {
  node = await boot();
  const first = await connect(node.url);
  await storageReady(first);
  const made = await call(first, "collection_create", { name: "shared", dim: DIM, metric: "l2" });
  assert.equal(made.durability, "disk");

  const clients = [first];
  for (let i = 1; i < CALLERS; ++i)
    clients.push(await connect(node.url));
  const before = await storageStatus(first);
  const acked = [];
  await Promise.all(clients.map(async (client, c) => {
    for (let i = 0; i < PER_CALLER; ++i) {
      const id = c * 1000 + i;
      const r = await call(client, "vector_upsert", { collection: "shared", ids: [id], vectors: [row(id)] });
      assert.equal(r.upserted, 1);
      acked.push(id);
    }
  }));
  // The kill first: nothing the status read below writes may make an answered change durable.
  process.kill(node.pid, "SIGKILL");
  await node.stop();
  const calls = CALLERS * PER_CALLER;
  assert.equal(acked.length, calls);

  node = await boot();
  const client = await connect(node.url);
  const after = await storageReady(client);
  assert.equal(after.state, "ready");
  const info = await call(client, "collection_stats", { collection: "shared" });
  assert.equal(info.count, calls, "every acknowledged upsert is back after SIGKILL, and nothing else");
  for (const id of [0, 7 * 1000 + PER_CALLER - 1, 3 * 1000 + 11]) {
    const got = await call(client, "vector_get", { collection: "shared", ids: [id] });
    assert.deepEqual(got.vectors[0].vector, row(id), `vector ${id}`);
  }
  // The burst's commits, from the log the second boot replayed: all of the first boot's commits
  // (no checkpoint was taken), counted by recovery.
  assert.equal(after.recovery.checkpoint_bytes, 0, "no checkpoint: the log holds every commit");
  const burstCommits = after.recovery.commits - before.commits;
  console.log(`${calls} calls from ${CALLERS} callers: ${burstCommits} commits (${before.commits} before the burst)`);
  assert.ok(burstCommits <= (calls * 9) / 10,
            `${burstCommits} commits for ${calls} concurrent changing calls: answers do not share commits`);
  await client.close();
  clearTimeout(timer);
  await node.stop();
  console.log("PASS shared_commits");
} catch (e) {
  clearTimeout(timer);
  console.error("FAIL:", e, "\n--- console ---\n" + (node ? node.log().slice(-3000) : ""));
  await node?.stop();
  process.exit(1);
}
