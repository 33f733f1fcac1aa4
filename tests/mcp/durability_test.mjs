// Durability from outside: the appliance on a disk image is killed with SIGKILL (QEMU itself, no
// warning, as a power cut) at seeded random moments while a stream of upserts and deletes is in
// flight, then booted again on the same image. After every restart:
//   - every acknowledged upsert is there with its exact vector, every acknowledged delete stays
//     deleted, and a call that was in flight at the kill is either wholly there or wholly absent;
//   - searches answer what a brute-force replay of the operations on the host answers;
//   - a collection created with durability "memory" is gone, a durable one is not;
//   - audit://log, read across the restart, holds a record of every answered call of the stream;
//   - kernel://status reports the recovery (records replayed, a torn tail dropped or not).
//   - a collection imported (collection_import) is there with its exact content after every
//     restart (imports are durable through a checkpoint; checkpoint_kib makes them frequent, so
//     kills also land while one is written, and recovery starts from one).
// Usage: node durability_test.mjs KERNEL_ELF [RUNS] [SEED] [CHECKPOINT_KIB]   (RUNS default 20; the
// long campaign passes hundreds)
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { boot, envelopeOf, storageReady, storageStatus, types } from "./sdk.mjs";

const { CallToolResultSchema } = types;
const [kernel, runsArg, seedArg, checkpointArg] = process.argv.slice(2);
const RUNS = Number(runsArg ?? 20);
const SEED = Number(seedArg ?? 19);
const CHECKPOINT_KIB = Number(checkpointArg ?? 0);
const DIM = 8, K = 5, IN_FLIGHT = 3;

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-durability."));
const disk = path.join(dir, "disk.img");
fs.writeFileSync(disk, "");
fs.truncateSync(disk, 64 << 20);
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));

// A small deterministic generator (xorshift32): a failing seed can be run again.
let state = SEED >>> 0 || 1;
const rand = () => {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296;
};
const randInt = (n) => Math.floor(rand() * n);
// float32-exact components, so what comes back compares with ===.
const vector = () => Array.from(new Float32Array(Array.from({ length: DIM }, () => rand() * 2 - 1)));

const model = new Map(); // id -> vector, the acknowledged state
let copy = null;         // the imported collection's content (id -> vector), once imported
let fromCheckpoint = 0, recoveringSeen = false;
let nextId = 1;
let nextPending = []; // the calls in flight at the last kill
let streamFrom = 0, acked = 0; // the audit trail's length when the last stream began; its answered calls

function bootOnDisk(name) {
  // stderr: QEMU's end by SIGKILL is reported by run.sh's shell there, once per run.
  const extra = CHECKPOINT_KIB ? ["--append", `checkpoint_kib=${CHECKPOINT_KIB}`] : [];
  const session = boot(name, ["--disk", disk, ...extra], { kernel, timeoutMs: 0, stderr: "ignore" });
  const call = async (tool, args) => {
    const r = await session.client.request({ method: "tools/call", params: { name: tool, arguments: args } },
                                           CallToolResultSchema, { timeout: 60000 });
    if (r.isError)
      throw Object.assign(new Error(`${tool}: ${JSON.stringify(r.structuredContent ?? r.content)}`), { result: r });
    return r.structuredContent;
  };
  return { ...session, call };
}

// The QEMU process serving this disk (run.sh runs it as a child in --stdio mode), found in /proc
// (a fresh Debian has no pgrep).
function qemuPid() {
  const found = [];
  for (const pid of fs.readdirSync("/proc").filter((d) => /^[0-9]+$/.test(d))) {
    let cmd = "";
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, "latin1");
    } catch {
      continue; // gone meanwhile
    }
    if (cmd.startsWith("qemu-system-aarch64\0") && cmd.includes(`file=${disk},`))
      found.push(Number(pid));
  }
  assert.equal(found.length, 1, `one QEMU on ${disk}: ${found}`);
  return found[0];
}

async function readAll(call, ids) {
  const found = new Map();
  for (let i = 0; i < ids.length; i += 16) {
    const r = await call("vector_get", { collection: "crash", ids: ids.slice(i, i + 16) });
    for (const v of r.vectors)
      found.set(v.id, v.vector);
  }
  return found;
}

function bruteForce(query) {
  const d = [...model].map(([id, v]) => [id, v.reduce((s, x, i) => s + (x - query[i]) ** 2, 0)]);
  d.sort((a, b) => a[1] - b[1] || a[0] - b[0]);
  return d.slice(0, K).map(([id]) => id);
}

// Checks the recovered state against the model; a call in flight at the kill (pending) may have
// happened or not, wholly: the model takes what the disk says for those.
async function verify(call, pending, run) {
  const touched = new Set(model.keys());
  for (const p of pending)
    for (const id of p.ids)
      touched.add(id);
  const ids = [...touched].sort((a, b) => a - b);
  const found = await readAll(call, ids);
  for (const p of pending) {
    const seen = p.ids.map((id, i) => (p.op === "upsert" ? found.has(id) && sameVec(found.get(id), p.vectors[i])
                                                          : !found.has(id)));
    const all = seen.every(Boolean), none = p.ids.every((id) => found.has(id) === model.has(id) &&
                                                         (!model.has(id) || sameVec(found.get(id), model.get(id))));
    assert.ok(all || none, `run ${run}: the in-flight ${p.op} of ${p.ids} is half there: ${JSON.stringify(seen)}`);
    if (all && !none) // (an update to the same value, or a delete of what was never there, is both)
      ++inFlightDone;
    else if (!all)
      ++inFlightLost;
    if (all)
      apply(p);
  }
  for (const id of ids) {
    if (model.has(id)) {
      assert.ok(found.has(id), `run ${run}: acknowledged id ${id} is missing after the restart`);
      assert.ok(sameVec(found.get(id), model.get(id)), `run ${run}: id ${id} has ${found.get(id)}, not ${model.get(id)}`);
    } else {
      assert.ok(!found.has(id), `run ${run}: deleted id ${id} is back after the restart`);
    }
  }
  const stats = await call("collection_stats", { collection: "crash" });
  assert.equal(stats.count, model.size, `run ${run}: live count`);
  if (model.size > 0) {
    for (let q = 0; q < 3; ++q) {
      const query = vector();
      const r = await call("vector_search", { collection: "crash", vector: query, k: K, ef: 256 });
      assert.deepEqual(r.hits.map((h) => h.id), bruteForce(query).slice(0, Math.min(K, model.size)),
                       `run ${run}: search ${q} differs from the host replay`);
    }
  }
}

const sameVec = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
function apply(p) {
  p.ids.forEach((id, i) => (p.op === "upsert" ? model.set(id, p.vectors[i]) : model.delete(id)));
}

// One operation of the stream: a few new ids, an update of existing ones, or a delete. No two
// calls in flight touch the same id, so each has a well-defined before and after.
function nextOp(busy) {
  const existing = [...model.keys()].filter((id) => !busy.has(id));
  const pick = (n) => {
    const out = new Set();
    for (let i = 0; i < n * 3 && out.size < n && existing.length; ++i)
      out.add(existing[randInt(existing.length)]);
    return [...out];
  };
  const r = rand();
  let ids;
  let op = "upsert";
  if (r < 0.5 || existing.length < 10)
    ids = Array.from({ length: 1 + randInt(6) }, () => nextId++);
  else if (r < 0.75)
    ids = pick(1 + randInt(4));
  else {
    op = "delete";
    ids = pick(1 + randInt(4));
  }
  if (ids.length === 0)
    ids = [nextId++];
  return { op, ids, vectors: op === "upsert" ? ids.map(vector) : undefined };
}

let tornTails = 0, inFlightDone = 0, inFlightLost = 0;
const started = Date.now();
for (let run = 0; run < RUNS; ++run) {
  const s = bootOnDisk(`durability-${run}`);
  try {
    await s.client.connect(s.transport);
    const status = await storageReady(s.client);
    assert.equal(status.state, "ready", `run ${run}: storage ${JSON.stringify(status)}`);
    if (run === 0) {
      assert.equal(status.recovery.formatted, true, "the empty image is formatted at the first boot");
      const made = await s.call("collection_create", { name: "crash", dim: DIM, metric: "l2", max_elements: 20000 });
      assert.equal(made.durability, "disk");
      const scratch = await s.call("collection_create", { name: "scratch", dim: DIM, metric: "l2", durability: "memory" });
      assert.equal(scratch.durability, "memory");
      await s.call("vector_upsert", { collection: "scratch", ids: [1], vectors: [vector()] });
    } else {
      tornTails += status.recovery.torn_tail_dropped ? 1 : 0;
      // The audit trail reads across the restart and holds every acknowledged call of the stream
      // (a call in flight at the kill may or may not have its record).
      const trail = JSON.parse((await s.client.readResource({ uri: "audit://log" })).contents[0].text);
      const streamed = trail.decisions.filter((d) => d.seq >= streamFrom && d.outcome === "allow" &&
                                                   (d.name === "vector_upsert" || d.name === "vector_delete"));
      assert.ok(streamed.length >= acked && streamed.length <= acked + nextPending.length,
                `run ${run}: the trail holds ${streamed.length} stream calls of the last boot, ${acked} were answered ` +
                `and ${nextPending.length} in flight; the trail from seq ${streamFrom}: ` +
                JSON.stringify(trail.decisions.filter((d) => d.seq >= streamFrom).map((d) => [d.seq, d.name, d.target])));
      const names = (await s.call("collection_list", {})).collections.map((c) => `${c.name}:${c.durability}`).sort();
      assert.deepEqual(names, copy ? ["copy:disk", "crash:disk"] : ["crash:disk"],
                       `run ${run}: the memory collection is gone, the durable ones are not`);
      await verify(s.call, nextPending, run);
      if (copy) {
        const got = await readAll((tool, args) => s.call(tool, { ...args, collection: "copy" }), [...copy.keys()]);
        assert.equal(got.size, copy.size, `run ${run}: the imported collection`);
        for (const [id, v] of copy)
          assert.ok(sameVec(got.get(id), v), `run ${run}: imported id ${id}`);
      }
      fromCheckpoint += status.recovery.checkpoint_bytes > 0 ? 1 : 0;
    }
    if (run === 2) {
      // Exported page by page, imported under a new name: answered once a checkpoint holds it.
      let snapshot = Buffer.alloc(0);
      for (let offset = 0, size = 1; offset < size;) {
        const page = await s.call("collection_export", { collection: "crash", offset });
        snapshot = Buffer.concat([snapshot, Buffer.from(page.data, "base64")]);
        size = page.size;
        offset = page.next;
      }
      const parts = Array.from({ length: Math.ceil(snapshot.length / 40000) },
                               (_, i) => snapshot.subarray(i * 40000, (i + 1) * 40000).toString("base64"));
      await s.call("collection_import", { name: "copy", snapshot_b64: parts, size: snapshot.length });
      copy = new Map(model);
      // A write to it right away: it waits for the checkpoint that makes the collection durable.
      const v = vector();
      await s.call("vector_upsert", { collection: "copy", ids: [999999], vectors: [v] });
      copy.set(999999, v);
      const after = (await storageStatus(s.client));
      assert.ok(after.checkpoints >= 1, `the import took a checkpoint: ${JSON.stringify(after)}`);
    }
    streamFrom = JSON.parse((await s.client.readResource({ uri: "audit://log" })).contents[0].text).records_total;
    acked = 0;
    // The stream: IN_FLIGHT calls at a time; the kill comes after a random number of them, with
    // others still in flight.
    const busy = new Set();
    const inFlight = new Set();
    const killAfter = 4 + randInt(40);
    let issued = 0;
    let killed = false;
    const pending = [];
    await new Promise((resolve) => {
      const launch = () => {
        while (!killed && inFlight.size < IN_FLIGHT) {
          const p = nextOp(busy);
          p.ids.forEach((id) => busy.add(id));
          inFlight.add(p);
          ++issued;
          const args = p.op === "upsert" ? { collection: "crash", ids: p.ids, vectors: p.vectors }
                                         : { collection: "crash", ids: p.ids };
          s.call(p.op === "upsert" ? "vector_upsert" : "vector_delete", args).then((r) => {
            if (killed)
              return; // answered, but after the kill was decided: treated as in flight
            if (p.op === "delete")
              assert.equal(r.deleted + r.missing.length, p.ids.length);
            apply(p);
            ++acked;
            inFlight.delete(p);
            p.ids.forEach((id) => busy.delete(id));
            launch();
          }, () => {}); // the kill ends calls in flight with an error: they stay pending
          if (issued >= killAfter) {
            killed = true;
            // A random moment inside the calls now in flight: at once (the last call barely sent)
            // or up to a few milliseconds later.
            const kill = () => {
              process.kill(qemuPid(), "SIGKILL");
              pending.push(...inFlight);
              resolve();
            };
            if (rand() < 0.4)
              kill();
            else
              setTimeout(kill, randInt(8));
            return;
          }
        }
      };
      launch();
    });
    await s.transport.close().catch(() => {});
    // The next boot checks what was in flight here.
    nextPending = pending;
  } catch (e) {
    await s.fail(e);
  }
}

// Final boot: the state after the last kill, checked, then a clean shutdown of the session.
{
  const s = bootOnDisk("durability-final");
  try {
    await s.client.connect(s.transport);
    // The appliance answers while it rebuilds the store: a store call made then waits for it and
    // is served once it is back (within the call's time limit; past it, a retryable `unavailable`).
    const before = (await storageStatus(s.client));
    const early = await s.client.request({ method: "tools/call", params: { name: "collection_list", arguments: {} } },
                                         CallToolResultSchema);
    recoveringSeen = before.state === "recovering";
    if (early.isError) {
      const envelope = envelopeOf(early);
      assert.equal(envelope.error.code, "unavailable", JSON.stringify(early));
      assert.equal(envelope.error.details.reason, "recovering", JSON.stringify(early));
      assert.ok(envelope.error.details.retry_after_ms > 0, JSON.stringify(early));
    } else {
      assert.ok(early.structuredContent.collections.length > 0, "served after recovery: the collections are there");
    }
    assert.ok(["recovering", "ready"].includes(before.state), JSON.stringify(before));
    await storageReady(s.client);
    await verify(s.call, nextPending, RUNS);
    const status = (await storageStatus(s.client));
    assert.ok(status.recovery.records > 0, JSON.stringify(status));
    console.log(`durability: ${RUNS} SIGKILLs (seed ${SEED}) in ${((Date.now() - started) / 1000).toFixed(1)} s; ` +
                `${model.size} vectors acknowledged and intact; of the calls in flight at the kills ${inFlightDone} had ` +
                `become durable, ${inFlightLost} had not; ${tornTails} restarts dropped a torn tail; ` +
                `${status.recovery.records} records replayed at the last boot in ${status.recovery.ms} ms; ` +
                `${fromCheckpoint} restarts began from a checkpoint; the last boot answered ` +
                `${recoveringSeen ? "while it rebuilt the store (the store call waited for it)" : "after the store was back"}`);
    if (CHECKPOINT_KIB)
      assert.ok(fromCheckpoint > 0, "with checkpoint_kib, restarts begin from checkpoints");
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}
