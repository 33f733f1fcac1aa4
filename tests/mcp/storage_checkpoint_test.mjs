// Checkpoints against what races them, through the official SDK over the serial line:
//   - a confirmed collection_drop of an import that is waiting for its checkpoint (an import is
//     durable only once a checkpoint holds it; its drop is not logged, since the log never had
//     it), sent while that checkpoint runs: the drop waits for it, is logged, and after a SIGKILL
//     and a restart the collection stays dropped, the others are intact and the store is ready
//     (it came back after the restart, or the journal failed for every durable collection);
//   - a grown image: the checkpoint after `truncate` made the disk larger goes where the current
//     one is not, and everything acknowledged comes back after a SIGKILL;
//   - eight callers writing one vector per call and searching, while frequent checkpoints begin
//     with writes queued: every call is answered (a checkpoint's export once waited behind a
//     write that waited for that checkpoint, and every durable call hung), and after a SIGKILL
//     every acknowledged vector is back.
// Usage: node storage_checkpoint_test.mjs KERNEL_ELF HNSW_CLI
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { HostIndex } from "./hnsw_host.mjs";
import { Client, StdioClientTransport, confirmAsHuman, envelopeOf, root, storageReady, storageStatus, types, unmetered } from "./sdk.mjs";

const [kernel, cli] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-ckpt."));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const watchdog = setTimeout(() => { console.error("FAIL: timed out"); process.exit(1); }, 280000);

let seed = 11;
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
const DIM = 32;
const row = () => Array.from({ length: DIM }, rand);

// A session whose QEMU the test can kill with SIGKILL (a power cut), through its own transport.
async function open(disk, name, extra = []) {
  const transport = new StdioClientTransport({
    command: path.join(root, "qemu/run.sh"),
    args: ["--kernel", kernel, "--stdio", ...unmetered, "--disk", disk, ...extra],
    stderr: "inherit",
  });
  const client = new Client({ name, version: "1.0.0" }, { capabilities: { elicitation: {} } });
  confirmAsHuman(client);
  await client.connect(transport);
  await client.listTools();
  await storageReady(client);
  const call = async (tool, args) => {
    const r = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 60000 });
    if (r.isError)
      throw new Error(`${tool}: ${JSON.stringify(envelopeOf(r))}`);
    return r.structuredContent;
  };
  const kill = async () => {
    process.kill(transport.pid, "SIGKILL"); // run.sh's QEMU dies with it (PR_SET_PDEATHSIG)
    await transport.close().catch(() => {});
  };
  return { client, call, kill, close: () => client.close(), status: () => storageStatus(client) };
}

const sameVec = (a, b) => a.length === b.length && a.every((x, i) => x === Math.fround(b[i]));

async function readAll(call, collection, ids) {
  const got = new Map();
  for (let at = 0; at < ids.length; at += 16) {
    const r = await call("vector_get", { collection, ids: ids.slice(at, at + 16) });
    for (const v of r.vectors)
      got.set(v.id, v.vector);
  }
  return got;
}

// 1. The drop of an import waiting for its checkpoint.
{
  const snapshotFile = path.join(dir, "big.snap");
  const host = new HostIndex({ dim: DIM, metric: "l2", m: 16, ef_construction: 64, max_elements: 12000 });
  for (let at = 0; at < 12000; at += 500) {
    const ids = Array.from({ length: 500 }, (_, i) => at + i);
    host.upsert(ids, ids.flatMap(() => row()));
  }
  host.save(snapshotFile);
  host.run(cli);
  const snapshot = fs.readFileSync(snapshotFile);
  assert.ok(snapshot.length > 2 << 20, `a large snapshot: ${snapshot.length} bytes`);

  const disk = path.join(dir, "drop.img");
  fs.writeFileSync(disk, "");
  fs.truncateSync(disk, 128 << 20);
  const kept = new Map();
  const s = await open(disk, "ckpt-drop-1");
  await s.call("collection_create", { name: "keep", dim: DIM, metric: "l2" });
  for (let i = 0; i < 20; ++i) {
    const v = row();
    await s.call("vector_upsert", { collection: "keep", ids: [i], vectors: [v] });
    kept.set(i, v);
  }
  // The import in chunks; its last chunk is answered only once a checkpoint holds it.
  const CHUNK = 720 * 1024;
  let imported = null;
  for (let offset = 0; offset < snapshot.length; offset += CHUNK) {
    const piece = snapshot.subarray(offset, offset + CHUNK);
    const strings = [];
    for (let i = 0; i < piece.length; i += 48 * 1024)
      strings.push(piece.subarray(i, i + 48 * 1024).toString("base64"));
    const args = { name: "big", size: snapshot.length, offset, snapshot_b64: strings };
    if (offset + CHUNK < snapshot.length)
      await s.call("collection_import", args);
    else
      imported = s.call("collection_import", args);
  }
  // The drop as soon as the collection is there: it is then waiting for its checkpoint.
  let dropped = null;
  for (let i = 0; i < 2000 && !dropped; ++i) {
    const names = (await s.call("collection_list", {})).collections.map((c) => c.name);
    if (names.includes("big"))
      dropped = s.call("collection_drop", { name: "big" });
  }
  assert.ok(dropped, "the imported collection appeared");
  await imported;
  await dropped;
  const st = await s.status();
  assert.equal(st.state, "ready", `the journal still works: ${JSON.stringify(st)}`);
  assert.ok(st.checkpoints >= 1, "the import took a checkpoint");
  const v = row();
  await s.call("vector_upsert", { collection: "keep", ids: [100], vectors: [v] });
  kept.set(100, v);
  await s.kill();

  const t = await open(disk, "ckpt-drop-2");
  const after = await t.status();
  assert.equal(after.state, "ready", JSON.stringify(after));
  const names = (await t.call("collection_list", {})).collections.map((c) => c.name).sort();
  assert.deepEqual(names, ["keep"], "the dropped import stays dropped");
  const got = await readAll(t.call, "keep", [...kept.keys()]);
  assert.equal(got.size, kept.size);
  for (const [id, vec] of kept)
    assert.ok(sameVec(got.get(id), vec), `keep: id ${id}`);
  await t.close();
  console.log(`drop during the import's checkpoint (${snapshot.length} bytes): stays dropped, the rest intact`);
}

// 2. A grown image: the checkpoint lands in the second half of a 16 MiB disk, the image is grown
// to 64 MiB, and the next checkpoints (forced by imports, which a checkpoint makes durable) must
// not go over it; a SIGKILL after them, and everything acknowledged is back.
{
  const disk = path.join(dir, "grow.img");
  fs.writeFileSync(disk, "");
  fs.truncateSync(disk, 16 << 20);
  const kept = new Map();
  const snapshotOf = async (call, collection) => {
    let snap = Buffer.alloc(0);
    for (let offset = 0, size = 1; offset < size;) {
      const page = await call("collection_export", { collection, offset });
      snap = Buffer.concat([snap, Buffer.from(page.data, "base64")]);
      size = page.size;
      offset = page.next;
    }
    return snap;
  };
  const importCopy = (call, name, snap) =>
    call("collection_import", { name, size: snap.length, snapshot_b64: [snap.toString("base64")] });
  const s = await open(disk, "ckpt-grow-1");
  await s.call("collection_create", { name: "g", dim: DIM, metric: "l2" });
  for (let i = 0; i < 40; ++i) {
    const v = row();
    await s.call("vector_upsert", { collection: "g", ids: [i], vectors: [v] });
    kept.set(i, v);
  }
  const snap = await snapshotOf(s.call, "g");
  await importCopy(s.call, "c1", snap); // checkpoint 1: the first half
  await importCopy(s.call, "c2", snap); // checkpoint 2: the second half
  assert.equal((await s.status()).checkpoints, 2);
  await s.close();
  fs.truncateSync(disk, 64 << 20);
  const t = await open(disk, "ckpt-grow-2");
  assert.equal((await t.status()).disk_bytes, 64 << 20);
  for (let i = 40; i < 60; ++i) {
    const v = row();
    await t.call("vector_upsert", { collection: "g", ids: [i], vectors: [v] });
    kept.set(i, v);
  }
  await importCopy(t.call, "c3", snap); // checkpoint 3, on the grown disk
  for (let i = 60; i < 70; ++i) {
    const v = row();
    await t.call("vector_upsert", { collection: "g", ids: [i], vectors: [v] });
    kept.set(i, v);
  }
  await importCopy(t.call, "c4", snap); // checkpoint 4
  await t.kill();
  const u = await open(disk, "ckpt-grow-3");
  const st = await u.status();
  assert.equal(st.state, "ready", JSON.stringify(st));
  const names = (await u.call("collection_list", {})).collections.map((c) => c.name).sort();
  assert.deepEqual(names, ["c1", "c2", "c3", "c4", "g"]);
  const got = await readAll(u.call, "g", [...kept.keys()]);
  assert.equal(got.size, kept.size);
  for (const [id, vec] of kept)
    assert.ok(sameVec(got.get(id), vec), `g: id ${id}`);
  await u.close();
  console.log("a grown image: checkpoints after the growth keep clear of the current one; all back after a kill");
}
// 3. Concurrent writers and readers across checkpoints (checkpoint_kib at its smallest: one every
// hundred or so calls, each beginning with writes queued behind the one it parks).
{
  const disk = path.join(dir, "busy.img");
  fs.writeFileSync(disk, "");
  fs.truncateSync(disk, 128 << 20);
  const CALLERS = 8;
  const WRITES = 800;
  const s = await open(disk, "ckpt-busy-1", ["--append", "checkpoint_kib=64"]);
  await s.call("collection_create", { name: "w", dim: DIM, metric: "l2", max_elements: WRITES + 100 });
  const before = (await s.status()).checkpoints;
  const kept = new Map();
  let next = 0;
  let searches = 0;
  await Promise.all(Array.from({ length: CALLERS }, async () => {
    while (next < WRITES) {
      const id = next++;
      const v = row();
      await s.call("vector_upsert", { collection: "w", ids: [id], vectors: [v] });
      kept.set(id, v);
      if (id % 4 === 0) {
        const found = await s.call("vector_search", { collection: "w", vector: v, k: 10, ef: 200 });
        assert.ok(found.hits.some((h) => h.id === id && h.distance === 0), `search finds ${id}, just written`);
        ++searches;
      }
    }
  }));
  const st = await s.status();
  assert.equal(st.state, "ready", JSON.stringify(st));
  const taken = st.checkpoints - before;
  assert.ok(taken >= 2, `checkpoints ran while the callers wrote: ${taken}`);
  await s.kill();
  const t = await open(disk, "ckpt-busy-2");
  const got = await readAll(t.call, "w", [...kept.keys()]);
  assert.equal(got.size, kept.size);
  for (const [id, vec] of kept)
    assert.ok(sameVec(got.get(id), vec), `w: id ${id}`);
  await t.close();
  console.log(`${CALLERS} callers, ${WRITES} writes and ${searches} searches across ${taken} checkpoints: all answered, all back after a kill`);
}
clearTimeout(watchdog);
console.log("storage checkpoints: a drop during an import's checkpoint stays dropped; a grown image recovers");
