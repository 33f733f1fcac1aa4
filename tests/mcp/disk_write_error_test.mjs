// A disk that fails a write: the appliance runs on a 64 MiB image behind QEMU's blkdebug driver
// (run.sh's BASALT_DISK_FAULTS), which fails every write touching one sector some way into the
// log. One-vector upserts through the SDK's callTool() go on until one is refused. Then:
//   - the refused call is answered storage_failed (the disk failed before its change was durable),
//     never as stored: a tool task's writes return once staged (abi::kTaskAckStaged) and only the
//     bridge's sync after the call's audit record says whether the commit carrying both made it;
//   - from then on writes to durable collections are refused storage_failed, reads are served, and
//     kernel://status says the journal failed;
//   - booted again on the same image without the fault, every acknowledged vector is back.
// Usage: node disk_write_error_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { boot, envelopeOf, storageReady, storageStatus } from "./sdk.mjs";

const [kernel] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-write-error."));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const disk = path.join(dir, "disk.img");
fs.writeFileSync(disk, "");
fs.truncateSync(disk, 64 << 20); // the log from 1 MiB in (sector 2048)
// About 50 KiB into the log: before the first checkpoint starts it over (128 KiB at least), after
// some dozens of one-vector commits.
const faults = path.join(dir, "faults.conf");
fs.writeFileSync(faults, '[inject-error]\nevent = "write_aio"\nerrno = "5"\nsector = "2148"\nonce = "off"\n');

const DIM = 8;
const row = (i) => Array.from({ length: DIM }, (_, k) => i + k / 8);

async function session(name, env, fn) {
  const s = boot(name, ["--disk", disk], { kernel, timeoutMs: 180000, env });
  try {
    await s.client.connect(s.transport);
    await storageReady(s.client);
    await fn(s.client);
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}

// The first boot formats the disk (which writes across the log): without the fault.
await session("format", {}, async (client) => {
  const made = await client.callTool({ name: "collection_create", arguments: { name: "c", dim: DIM, metric: "l2" } });
  assert.equal(made.isError, false, JSON.stringify(made));
  assert.equal(made.structuredContent.durability, "disk");
});

const acked = [];
let refusedId = -1;
await session("write-error", { BASALT_DISK_FAULTS: faults }, async (client) => {
  assert.equal((await storageStatus(client)).state, "ready");
  for (let i = 0; i < 2000 && refusedId < 0; ++i) {
    const r = await client.callTool({ name: "vector_upsert", arguments: { collection: "c", ids: [i], vectors: [row(i)] } });
    if (!r.isError) {
      assert.equal(r.structuredContent.upserted, 1);
      acked.push(i);
      continue;
    }
    refusedId = i;
    const { error } = envelopeOf(r);
    assert.equal(error.details?.reason, "storage_failed", JSON.stringify(error));
    assert.match(error.message, /disk failed/);
  }
  assert.ok(refusedId > 0 && acked.length > 0, `the fault was never hit (${acked.length} upserts acknowledged)`);
  const st = await storageStatus(client);
  assert.equal(st.state, "failed", JSON.stringify(st));
  const again = await client.callTool({ name: "vector_upsert", arguments: { collection: "c", ids: [5000], vectors: [row(5000)] } });
  assert.equal(envelopeOf(again).error.details?.reason, "storage_failed", "writes are refused once the journal failed");
  const got = await client.callTool({ name: "vector_get", arguments: { collection: "c", ids: [acked[0]] } });
  assert.deepEqual(got.structuredContent.vectors.map((v) => v.id), [acked[0]], "reads are served");
});

await session("after-write-error", {}, async (client) => {
  const st = await storageStatus(client);
  assert.equal(st.state, "ready", JSON.stringify(st));
  for (let at = 0; at < acked.length; at += 16) {
    const ids = acked.slice(at, at + 16);
    const got = await client.callTool({ name: "vector_get", arguments: { collection: "c", ids } });
    assert.equal(got.isError, false, JSON.stringify(got));
    assert.deepEqual(got.structuredContent.missing, [], `acknowledged upserts lost: ${got.structuredContent.missing}`);
    for (const v of got.structuredContent.vectors)
      assert.deepEqual(v.vector, row(v.id));
  }
});
console.log(`a failed disk write: ${acked.length} upserts acknowledged before it, upsert ${refusedId} answered ` +
            "storage_failed, all acknowledged ones back after a restart");
