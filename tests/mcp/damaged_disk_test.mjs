// Damaged disks boot with a clear report, never a crash: the appliance serves (memory
// collections work), kernel://status says why the disk is not used, and durable writes are refused
// with an error that says so.
//   - random bytes, a foreign superblock, an image too small, a truncated image: nothing is
//     replayed; the disk is left as it is (never formatted over);
//   - one superblock copy damaged: the other is used, everything is there, the status says so;
//   - a commit damaged in the middle of the log: what came before it is served read-only, the
//     status reports damage (not a torn tail), writes are refused;
//   - a checkpoint with a flipped byte: refused as damaged (an intact one loads).
// Usage: node damaged_disk_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { diskSession, envelopeOf } from "./sdk.mjs";

const [kernel] = process.argv.slice(2);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-damaged."));
process.on("exit", () => process.env.KEEP ? console.log(dir) : fs.rmSync(dir, { recursive: true, force: true }));
const SECTOR = 512, LOG_FIRST = 2048 * SECTOR;

const session = (image, fn) => diskSession(`damaged-${path.basename(image)}`, image, fn, { kernel });

const image = (name, bytes) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, bytes);
  return p;
};
const code = (r) => envelopeOf(r)?.error?.code;
const reason = (r) => envelopeOf(r)?.error?.details?.reason;

// The appliance on a disk it must not use: it still serves, says why, refuses durable writes.
async function refused(file, why) {
  const before = fs.readFileSync(file);
  await session(file, async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "failed", `${path.basename(file)}: ${JSON.stringify(st)}`);
    assert.match(st.reason, why);
    const durable = await call("collection_create", { name: "d", dim: 4, metric: "l2" });
    assert.equal(durable.isError, true, "no durable collection on a disk that is not used");
    assert.equal(reason(durable), "storage_failed");
    const mem = await call("collection_create", { name: "m", dim: 4, metric: "l2", durability: "memory" });
    assert.equal(mem.isError, false, JSON.stringify(mem));
    assert.equal(mem.structuredContent.durability, "memory");
    const up = await call("vector_upsert", { collection: "m", ids: [1], vectors: [[1, 2, 3, 4]] });
    assert.equal(up.isError, false, "memory collections work as ever");
  });
  assert.ok(before.equals(fs.readFileSync(file)), `${path.basename(file)}: the disk is left as it was`);
}

await refused(image("random.img", crypto.randomBytes(8 << 20)), /no Basalt superblock/);
const foreign = Buffer.alloc(8 << 20);
foreign.write("BSLTSUPR", 0); // the magic, but nothing valid after it (both copies)
foreign.write("BSLTSUPR", SECTOR);
await refused(image("foreign.img", foreign), /no Basalt superblock/);
await refused(image("tiny.img", Buffer.alloc(1 << 20)), /too small/);

// A good disk with a history: a collection, 24 upserts (one commit each), some deletes.
const good = path.join(dir, "good.img");
fs.writeFileSync(good, "");
fs.truncateSync(good, 64 << 20); // a 16 MiB log from 1 MiB in, then two checkpoint areas
const row = (i) => [i, i * 0.5, -(i + 1), 1 / (i + 1)];
await session(good, async ({ call, status }) => {
  assert.equal((await status()).recovery.formatted, true);
  const made = await call("collection_create", { name: "kept", dim: 4, metric: "l2" });
  assert.equal(made.structuredContent.durability, "disk");
  for (let i = 0; i < 24; ++i)
    assert.equal((await call("vector_upsert", { collection: "kept", ids: [i], vectors: [row(i)] })).isError, false);
  assert.equal((await call("vector_delete", { collection: "kept", ids: [0, 1] })).isError, false);
});
const goodBytes = fs.readFileSync(good);

// Truncated: the superblock describes a log past the end.
await refused(image("truncated.img", goodBytes.subarray(0, 12 << 20)), /smaller than its superblock says/);

// One superblock copy damaged: the other serves, all is there.
{
  const b = Buffer.from(goodBytes);
  b.fill(0x5a, 0, 64); // copy 0 (generation 2, the newest: formatting writes both)
  const f = image("one-copy.img", b);
  await session(f, async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "ready", JSON.stringify(st));
    assert.equal(st.recovery.superblock_copy_damaged, true);
    const got = await call("vector_get", { collection: "kept", ids: [5, 23, 0] });
    assert.deepEqual(got.structuredContent.vectors.map((v) => v.id), [5, 23]);
    assert.deepEqual(got.structuredContent.missing, [0]);
  });
}

// A commit damaged in the middle: the log's commits start at sector boundaries with "BWAL" and the
// first-of-commit flag; the 10th one gets a flipped byte in its payload, a flipped bit in its
// epoch (bytes 4-7 of its header: it must not pass for the end of the log, or the older epoch's
// leftovers after a checkpoint), or a zeroed first word (what the end of the log looks like).
const commitStarts = (b) => {
  const commits = [];
  for (let at = LOG_FIRST; at + SECTOR <= b.length; at += SECTOR)
    if (b.toString("latin1", at, at + 4) === "BWAL" && (b.readUInt16LE(at + 22) & 1))
      commits.push(at);
  return commits;
};
// How many records the commit starting at `at` holds (each: a 32-byte header, the payload padded
// to 8; the last has flag 2).
const recordsIn = (b, at) => {
  for (let n = 1; ; ++n) {
    if (b.readUInt16LE(at + 22) & 2)
      return n;
    at += 32 + ((b.readUInt32LE(at + 16) + 7) & ~7);
  }
};
const damages = [
  ["payload", (b, at) => { b[at + 40] ^= 0x01; }],
  ["epoch", (b, at) => { b[at + 5] ^= 0x04; }],
  ["zero-word", (b, at) => { b.writeUInt32LE(0, at); }],
];
for (const [what, damage] of damages) {
  const b = Buffer.from(goodBytes);
  const commits = commitStarts(b);
  assert.ok(commits.length >= 25, `commits found: ${commits.length}`);
  damage(b, commits[9]);
  const f = image(`middle-${what}.img`, b);
  await session(f, async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "failed", `${what}: ${JSON.stringify(st)}`);
    assert.equal(st.recovery.damaged, true, what);
    assert.equal(st.recovery.torn_tail_dropped, false, "damage in the middle is not a torn tail");
    assert.match(st.reason, /damaged in the middle/);
    // What came before the damage is there; nothing after it was replayed.
    const list = (await call("collection_list", {})).structuredContent.collections;
    assert.deepEqual(list.map((c) => c.name), ["kept"]);
    const count = list[0].count;
    assert.ok(count > 0 && count < 22, `a prefix of the history: ${count} vectors`);
    // (A call's audit record shares its upsert's commit or has its own: group commit decides.)
    const before = commits.slice(0, 9).reduce((n, at) => n + recordsIn(goodBytes, at), 0);
    assert.equal(st.recovery.records, before, `${what}: the records of the nine commits before the damaged tenth`);
    const got = await call("vector_get", { collection: "kept", ids: [0] });
    assert.deepEqual(got.structuredContent.vectors.map((v) => v.vector), [row(0)]);
    // Read-only: the disk is behind what a write would change.
    const up = await call("vector_upsert", { collection: "kept", ids: [100], vectors: [row(100)] });
    assert.equal(up.isError, true);
    assert.equal(reason(up), "storage_failed");
    const search = await call("vector_search", { collection: "kept", vector: row(0), k: 1 });
    assert.equal(search.structuredContent.hits[0].id, 0, "reads are served");
  });
  assert.ok(b.equals(fs.readFileSync(f)), "the damaged disk is left as it was, for whoever repairs it");
}
// A record whose CRCs hold but whose content does not fit: an upsert of the dim-4 collection
// rewritten as two vectors of dim 1 (the same length: 8 + 16 bytes of ids and floats either way),
// its CRC and the chain after it made good again. Replay must refuse it (vec_insert reads count x
// the collection's dim floats: it would read past the record and store garbage), never insert it.
{
  const table = Array.from({ length: 256 }, (_, i) => {
    let c = i;
    for (let k = 0; k < 8; ++k)
      c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    return c >>> 0;
  });
  const crc32c = (crc, bytes) => {
    crc = ~crc >>> 0;
    for (const byte of bytes)
      crc = (table[(crc ^ byte) & 0xff] ^ (crc >>> 8)) >>> 0;
    return ~crc >>> 0;
  };
  const le32 = (v) => { const x = Buffer.alloc(4); x.writeUInt32LE(v >>> 0); return x; };
  const b = Buffer.from(goodBytes);
  const epoch = b.readUInt32LE(LOG_FIRST + 4);
  const upserts = commitStarts(b).filter((at) => b.readUInt16LE(at + 20) === 3 && b.readUInt32LE(at + 16) === 112);
  assert.ok(upserts.length >= 10, `single-vector upsert commits: ${upserts.length}`);
  const victim = upserts[8] + 32; // its payload: name prefix (72 bytes), dim, count, provenance, ids, floats
  assert.equal(b.readUInt32LE(victim + 72), 4);
  b.writeUInt32LE(1, victim + 72);
  b.writeUInt32LE(2, victim + 76);
  // Every record's CRC and the chain again, from the log's start to its end.
  let chain = crc32c(0, le32(epoch));
  for (let at = LOG_FIRST; b.toString("latin1", at, at + 4) === "BWAL" && b.readUInt32LE(at + 4) === epoch;) {
    let r = at;
    for (let last = false; !last;) {
      const len = b.readUInt32LE(r + 16);
      const crc = crc32c(crc32c(0, b.subarray(r, r + 24)), b.subarray(r + 32, r + 32 + len));
      b.writeUInt32LE(crc, r + 24);
      chain = crc32c(chain, le32(crc));
      b.writeUInt32LE(chain, r + 28);
      last = (b.readUInt16LE(r + 22) & 2) !== 0;
      r += 32 + ((len + 7) & ~7);
    }
    at = Math.ceil(r / SECTOR) * SECTOR;
  }
  const f = image("wrong-dim.img", b);
  await session(f, async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "failed", JSON.stringify(st));
    assert.match(st.reason, /could not be replayed/);
    const got = await call("vector_get", { collection: "kept", ids: [5] });
    assert.deepEqual(got.structuredContent?.vectors?.map((v) => v.vector), [row(5).map(Math.fround)], `the records before it are served: ${JSON.stringify(got).slice(0, 600)}`);
  });
}

// A damaged checkpoint: the import of a copy of "kept" takes one (imports are durable through a
// checkpoint); a byte flipped inside its first piece is refused, with nothing replayed over it.
{
  const f = image("checkpointed.img", goodBytes);
  await session(f, async ({ call, status }) => {
    let snapshot = Buffer.alloc(0);
    for (let offset = 0, size = 1; offset < size;) {
      const result = await call("collection_export", { collection: "kept", offset });
      assert.ok(!result.isError, `export page at ${offset}: ${JSON.stringify(result).slice(0, 400)}`);
      const page = result.structuredContent;
      snapshot = Buffer.concat([snapshot, Buffer.from(page.data, "base64")]);
      size = page.size;
      offset = page.next;
    }
    const imported = await call("collection_import", { name: "copy", snapshot_b64: [snapshot.toString("base64")],
                                                       size: snapshot.length });
    assert.equal(imported.isError, false, JSON.stringify(imported));
    assert.equal((await status()).checkpoints, 1);
  });
  const b = fs.readFileSync(f);
  // The newest superblock copy names the checkpoint (generation at 16, checkpoint sector at 48).
  const newest = b.readBigUInt64LE(16) > b.readBigUInt64LE(SECTOR + 16) ? 0 : SECTOR;
  const at = Number(b.readBigUInt64LE(newest + 48)) * SECTOR;
  assert.ok(at > LOG_FIRST, "a checkpoint is named");
  await session(image("checkpoint-ok.img", b), async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "ready", JSON.stringify(st));
    assert.ok(st.recovery.checkpoint_bytes > 0);
    const list = (await call("collection_list", {})).structuredContent.collections.map((c) => c.name).sort();
    assert.deepEqual(list, ["copy", "kept"]);
  });
  b[at + 4096 + 100] ^= 0x01;
  await refused(image("checkpoint-bad.img", b), /checkpoint is damaged/);
}

// The newest superblock copy damaged after a checkpoint and later commits: the other copy is one
// checkpoint behind (checkpoints rewrite the superblock, the log then starts over in a new epoch).
// Recovery finds the checkpoint the lost copy named and replays the new epoch's log: every
// acknowledged vector is there. With that checkpoint's header damaged too, nothing can be
// recovered from it: the store is read-only and says why, and the disk is not written.
{
  const f = path.join(dir, "behind.img");
  fs.writeFileSync(f, "");
  fs.truncateSync(f, 64 << 20);
  const acked = new Map();
  await diskSession("damaged-behind", f, async ({ call, status }) => {
    assert.equal((await call("collection_create", { name: "c", dim: 4, metric: "l2" })).isError, false);
    // Upserts until two checkpoints were taken (one every 64 KiB of log).
    for (let i = 0; (await status()).checkpoints < 2; ++i) {
      assert.ok(i < 400, "checkpoints are taken");
      const r = await call("vector_upsert", { collection: "c", ids: [1000 + i, 2000 + i], vectors: [row(i), row(i + 1)] });
      assert.equal(r.isError, false, JSON.stringify(r));
      acked.set(1000 + i, row(i)).set(2000 + i, row(i + 1));
    }
    // The log of the newest epoch must hold commits (else the older copy's log is still whole):
    // one more upsert until one lands after the last checkpoint.
    for (let i = 40, settled = false; !settled; ++i) {
      assert.ok(i < 80, "an upsert after the last checkpoint");
      const before = (await status()).checkpoints;
      assert.equal((await call("vector_upsert", { collection: "c", ids: [i], vectors: [row(i)] })).isError, false);
      acked.set(i, row(i));
      settled = (await status()).checkpoints === before;
    }
  }, { kernel, args: ["--append", "checkpoint_kib=64"] });
  const b = fs.readFileSync(f);
  const gen = (at) => b.readBigUInt64LE(at + 16);
  const newest = gen(0) > gen(SECTOR) ? 0 : SECTOR;
  const checkpointAt = Number(b.readBigUInt64LE(newest + 48)) * SECTOR;
  assert.ok(checkpointAt > LOG_FIRST, "the newest copy names a checkpoint");
  assert.ok(b.readUInt32LE(newest + 24) > b.readUInt32LE(SECTOR - newest + 24), "the other copy is of an earlier epoch");
  b.fill(0xa5, newest, newest + 128);
  const ids = [...acked.keys()];
  await session(image("behind-one.img", b), async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "ready", JSON.stringify(st));
    assert.equal(st.recovery.superblock_copy_damaged, true);
    assert.equal(st.recovery.newer_checkpoint_found, true);
    for (let at = 0; at < ids.length; at += 16) { // vector_get takes 16 ids a call
      const res = await call("vector_get", { collection: "c", ids: ids.slice(at, at + 16) });
      const got = res.structuredContent;
      assert.ok(Array.isArray(got?.vectors), JSON.stringify(res).slice(0, 400));
      assert.deepEqual(got.missing ?? [], [], "every acknowledged vector is there");
      for (const v of got.vectors)
        assert.deepEqual(v.vector, acked.get(v.id).map(Math.fround));
    }
  });
  const both = Buffer.from(b);
  both[checkpointAt + 8] ^= 0x01; // the newer checkpoint's header (its version field)
  const bothFile = image("behind-both.img", both);
  await session(bothFile, async ({ call, status }) => {
    const st = await status();
    assert.equal(st.state, "failed", JSON.stringify(st));
    assert.match(st.reason, /log is newer than the superblock/);
    const up = await call("collection_create", { name: "d", dim: 4, metric: "l2" });
    assert.equal(reason(up), "storage_failed");
  });
  assert.ok(both.equals(fs.readFileSync(bothFile)), "nothing overwritten: the log and the checkpoint are as they were");
}
console.log("damaged disks: random, foreign, tiny, truncated and a damaged checkpoint refused with a reason; one " +
            "superblock copy and damage in the middle of the log (payload, epoch, first word) reported, what is intact served; a superblock one checkpoint behind recovers from the checkpoint its lost copy named, or refuses");
