// A full disk: on the smallest disk (8 MiB: a 2 MiB log, two 2.5 MiB checkpoint areas) a
// collection grows until neither the log nor a checkpoint has room. Then:
//   - the write that does not fit is refused as `storage_full`: of that call, a prefix of whole
//     chunks (the upsert tool stores 4,096 floats per chunk, each durable before the next) is
//     stored and nothing else, and everything acknowledged before is there, read and searched;
//   - a memory collection still takes writes; kernel://status says what happened (not `failed`);
//   - after a restart exactly the acknowledged vectors are back (nothing half-written);
//   - every answered call's audit record is on the disk, or counted as not logged: a checkpoint
//     that found no room holds none of the records staged when it began (they stay for the log);
//   - 1,000 audited calls while the full disk is recovered: the records the log has no room for
//     are counted, never written past its end (the journal failed at the first group after
//     recovery, and every durable collection with it);
//   - dropping the collection is still possible (a drop may use a reserve kept back for it), and
//     the checkpoint after it gives the room back: a new collection takes writes again.
// Usage: node storage_full_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { boot, diskSession, envelopeOf, storageReady, storageStatus } from "./sdk.mjs";

const [kernel] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-full."));
const disk = path.join(dir, "disk.img");
fs.writeFileSync(disk, "");
fs.truncateSync(disk, 8 << 20);
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const DIM = 256, PER_CALL = 64;

let seed = 7;
// Math.imul: a product in doubles loses its low bits past 2^53, and the sequence then repeats every
// 419 vectors (enough of them fill the disk to put more than k exact duplicates in a search).
const rand = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 4294967296) * 2 - 1;
const rows = (n) => Float32Array.from({ length: n * DIM }, rand);
const b64 = (f32) => {
  const out = [];
  const per = Math.floor(49152 / (4 * DIM)) * DIM;
  for (let at = 0; at < f32.length; at += per) {
    const part = f32.subarray(at, at + per);
    out.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("base64"));
  }
  return out;
};
const rowOf = (f32, i) => Array.from(f32.subarray(i * DIM, (i + 1) * DIM));

// (human: the drop needs a human's yes, the sink policy)
const session = (name, fn) => diskSession(name, disk, fn, { kernel, timeoutMs: 240000, callTimeoutMs: 120000, human: true });

let count = 0, upsertsAnswered = 0, auditNotLogged = 0;
let first = null, last = null;
await session("full-1", async ({ call, status }) => {
  assert.equal((await call("collection_create", { name: "big", dim: DIM, metric: "l2", max_elements: 20000 })).isError, false);
  let refused = null, refusedData = null;
  for (let c = 0; c < 200 && !refused; ++c) {
    const data = rows(PER_CALL);
    const ids = Array.from({ length: PER_CALL }, (_, i) => count + i);
    const r = await call("vector_upsert", { collection: "big", ids, vectors_f32: b64(data) });
    if (r.isError) {
      refused = envelopeOf(r).error;
      refusedData = data;
      break;
    }
    assert.equal(r.structuredContent.upserted, PER_CALL);
    ++upsertsAnswered;
    if (!first)
      first = [0, rowOf(data, 0)];
    last = [count + PER_CALL - 1, rowOf(data, PER_CALL - 1)];
    count += PER_CALL;
  }
  assert.ok(refused, `the disk never filled (${count} vectors)`);
  assert.equal(refused.code, "storage_full", JSON.stringify(refused));
  assert.equal(refused.details.reason, "storage_full");
  // Of the refused call, whole chunks from its start were stored (each was durable before the
  // next was tried), then nothing; what came before is read and searched as ever.
  const chunk = 4096 / DIM;
  const now = (await call("collection_stats", { collection: "big" })).structuredContent.count;
  const prefix = now - count;
  assert.ok(prefix >= 0 && prefix < PER_CALL && prefix % chunk === 0, `stored of the refused call: ${prefix}`);
  if (prefix > 0) {
    const edge = (await call("vector_get", { collection: "big", ids: [count + prefix - 1, count + prefix] })).structuredContent;
    assert.deepEqual(edge.vectors.map((v) => v.vector), [rowOf(refusedData, prefix - 1)]);
    assert.deepEqual(edge.missing, [count + prefix]);
    last = [count + prefix - 1, rowOf(refusedData, prefix - 1)];
  }
  count = now;
  const got = (await call("vector_get", { collection: "big", ids: [first[0], last[0], count] })).structuredContent;
  assert.deepEqual(got.vectors.map((v) => v.id), [first[0], last[0]]);
  assert.deepEqual(got.missing, [count]);
  const hits = (await call("vector_search", { collection: "big", vector: last[1], k: 10, ef: 512 })).structuredContent.hits;
  assert.ok(hits.some((h) => h.id === last[0] && h.distance === 0), `searches are served: ${JSON.stringify(hits)}`);
  const mem = await call("collection_create", { name: "scratch", dim: 4, metric: "l2", durability: "memory" });
  assert.equal(mem.isError, false);
  assert.equal((await call("vector_upsert", { collection: "scratch", ids: [1], vectors: [[1, 2, 3, 4]] })).isError, false);
  const st = await status();
  assert.equal(st.state, "ready", JSON.stringify(st));
  assert.ok(st.refused_full > 0, JSON.stringify(st));
  auditNotLogged = st.audit_records_not_logged;
  console.log(`full after ${count} vectors of ${DIM} floats on an 8 MiB disk; ${st.checkpoints} checkpoints; ` +
              `${st.audit_records_logged} audit records logged, ${auditNotLogged} not`);
});

// The restart on the full disk: audited calls from the first moment, while the store is recovered.
{
  const s = boot("full-backlog", ["--disk", disk], { kernel, timeoutMs: 240000 });
  try {
    await s.client.connect(s.transport);
    await s.client.listTools();
    // Every upsert answered before the restart has its record in the trail (the newest 100
    // decisions cover the whole first session), except those counted as not logged.
    const trail = JSON.parse((await s.client.readResource({ uri: "audit://log" })).contents[0].text);
    const upserts = trail.decisions.filter((d) => d.name === "vector_upsert" && d.outcome === "allow").length;
    assert.ok(upserts >= upsertsAnswered - auditNotLogged,
              `${upserts} answered upserts in the trail after the restart, ${upsertsAnswered} answered, ${auditNotLogged} not logged`);
    let recovering = 0;
    for (let i = 0; i < 1000; i += 4) { // four at a time: the caller's concurrency limit
      const state = (await storageStatus(s.client)).state;
      const answers = await Promise.all(Array.from({ length: 4 }, () => s.client.callTool({ name: "kernel_info", arguments: {} })));
      assert.ok(answers.every((a) => !a.isError));
      if (state === "recovering")
        recovering += 4;
    }
    const st = await storageReady(s.client);
    assert.equal(st.state, "ready", `the journal works after the backlog: ${JSON.stringify(st)}`);
    // (The first group after recovery is written now; the state after it is what matters.)
    const drop = await s.client.callTool({ name: "collection_list", arguments: {} });
    assert.equal(drop.isError, false);
    const after = await storageStatus(s.client);
    assert.equal(after.state, "ready", JSON.stringify(after));
    console.log(`1,000 audited calls after the restart, ${recovering} of them while the store was recovered; ` +
                `${after.audit_records_logged} audit records logged, ${after.audit_records_not_logged} not (no room)`);
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}

await session("full-2", async ({ call, status }) => {
  // Exactly the acknowledged vectors came back.
  assert.equal((await call("collection_stats", { collection: "big" })).structuredContent.count, count);
  const got = (await call("vector_get", { collection: "big", ids: [first[0], last[0], count] })).structuredContent;
  assert.deepEqual(got.vectors.map((v) => v.vector), [first[1], last[1]].map((r) => Array.from(Float32Array.from(r))));
  // A drop still goes through; the checkpoint after it gives the room back.
  const dropped = await call("collection_drop", { name: "big" });
  assert.equal(dropped.isError, false, JSON.stringify(dropped));
  assert.equal((await call("collection_create", { name: "again", dim: DIM, metric: "l2", max_elements: 1000 })).isError, false);
  let ok = null;
  for (let i = 0; i < 100 && !(ok && !ok.isError); ++i) { // until the checkpoint after the drop has run
    ok = await call("vector_upsert", { collection: "again", ids: [1], vectors_f32: b64(rows(1)) });
    if (ok.isError)
      assert.equal(envelopeOf(ok).error.code, "storage_full");
  }
  assert.equal(ok.isError, false, "room again after the drop");
  assert.ok((await status()).checkpoints >= 1);
});
console.log("storage_full: refused after a prefix of whole chunks, reads served, the acknowledged state back after a restart, room back after a drop");
