// The first minute after a boot with data (issue 32, item 2), from outside with the official SDK's
// stdio client, as every MCP host does it: launch, initialize, list the tools and call at once.
//   - a disk holding one collection of VECTORS vectors (dim 100) is built first (batched upserts,
//     checkpoints put off: the next boot replays the whole log, the index rebuilt insert by insert
//     in the vector workers, the part of recovery that used to starve the bridges; a small M and
//     ef_construction keep the build quick);
//   - booted again as `./basalt run` boots (recovery_links=background, the default): recovery
//     gives the vectors back without the graph work (collection_stats `unlinked` counts them),
//     the stored vector is found at once, exactly, while the vector workers link the rest in the
//     background, and found again once `unlinked` is 0; kernel_info answers meanwhile;
//   - booted again with `recovery_links=inline` (the whole graph rebuilt before the store serves,
//     the long recovery this test was written for): vector_search, called the moment the tools are listed, waits for the store
//     (progress notifications meanwhile) and finds the stored vector it was given. Should the
//     recovery outlast the call's time limit (10 s) on a slow machine, the call must have waited
//     that long and been answered the retryable `unavailable` (reason, retry_after_ms, progress),
//     and the same call, sent again after retry_after_ms, succeeds;
//   - kernel_info, called at once and then every 20 ms until the store is back, succeeds every
//     time and answers within 100 ms: the bridges and tool tasks run ahead of the recovery,
//     whatever the speed of the machine. Measured on the client, so a host busy with other work
//     can stall the emulator now and then: 99% of the calls are held to 100 ms and the slowest to
//     1 s (before the fix, half of them took 2.7 s or more, the slowest 17 s); and what makes it
//     so is checked as such: while the store is rebuilt the storage task runs below the tool
//     tasks (kernel_tasks), and at its own priority again once it is back;
//   - booted once more with the line's calls limited to 500 ms (`--limit console:time_ms=500`):
//     a vector_search made during recovery waits out those 500 ms and is answered `unavailable`
//     (reason `recovering`, retry_after_ms, replayed_so_far), not internal_error; a vector_get
//     cancelled while it waits is released and audited as cancelled, never answered.
// Usage: node boot_recovery_test.mjs KERNEL_ELF [VECTORS]   (VECTORS default 20000)
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { boot, envelopeOf, storageReady, storageStatus } from "./sdk.mjs";

const [kernel, vectorsArg] = process.argv.slice(2);
const VECTORS = Number(vectorsArg ?? 20000);
const DIM = 100, CHUNK = 250, K = 5, BOUND_MS = 100, STALL_MS = 1000, TOOL_PRIORITY = 15;
const runArgs = (disk, links = "inline") => ["--disk", disk, "--append", `checkpoint_kib=1048576 recovery_links=${links}`];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-boot-recovery."));
const disk = path.join(dir, "disk.img");
fs.writeFileSync(disk, "");
fs.truncateSync(disk, 256 << 20);
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));

let state = 32;
const rand = () => {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state / 4294967296 * 2 - 1;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let probe = null; // one stored vector (float32-exact), searched for after the restart

// The disk: one collection, VECTORS vectors in calls of CHUNK (base64 float32 rows).
{
  const s = boot("boot-recovery-fill", runArgs(disk), { kernel, timeoutMs: 600000, stderr: "ignore" });
  try {
    await s.client.connect(s.transport);
    await storageReady(s.client);
    const call = async (name, args) => {
      const r = await s.client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
      assert.ok(!r.isError, `${name}: ${JSON.stringify(r)}`);
      return r.structuredContent;
    };
    await call("collection_create", { name: "big", dim: DIM, metric: "l2", max_elements: VECTORS, m: 8, ef_construction: 32 });
    const t0 = Date.now();
    for (let at = 0; at < VECTORS; at += CHUNK) {
      const n = Math.min(CHUNK, VECTORS - at);
      const rows = Float32Array.from({ length: n * DIM }, rand);
      if (at === Math.floor(VECTORS / 2 / CHUNK) * CHUNK)
        probe = { id: at, vector: Array.from(rows.subarray(0, DIM)) };
      const args = { collection: "big", ids: Array.from({ length: n }, (_, i) => at + i), vectors_f32: split(rows) };
      // A call held back by a checkpoint past the tool's time limit (10 s) stored a prefix of its
      // chunks: upserts are idempotent, so it is sent again (as the storage benchmark does).
      for (let tries = 0; ; ++tries) {
        const r = await s.client.callTool({ name: "vector_upsert", arguments: args }, undefined, { timeout: 120000 });
        if (!r.isError) {
          assert.equal(r.structuredContent.upserted, n);
          break;
        }
        assert.ok(tries < 5 && envelopeOf(r).error.code === "limit_time_exceeded", JSON.stringify(r));
      }
    }
    const st = await storageStatus(s.client);
    console.log(`disk: ${VECTORS} vectors of ${DIM} floats stored in ${Date.now() - t0} ms; log ` +
                `${st.log_bytes - st.log_free_bytes} bytes, ${st.checkpoints} checkpoints`);
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}

// Whole rows per base64 string (the tool takes strings of at most 48 KiB of floats each).
function split(rows) {
  const bytes = Buffer.from(rows.buffer, rows.byteOffset, rows.byteLength);
  const perString = Math.floor(49152 / (4 * DIM)) * 4 * DIM;
  const out = [];
  for (let at = 0; at < bytes.length; at += perString)
    out.push(bytes.subarray(at, at + perString).toString("base64"));
  return out;
}

// The boot with data as `./basalt run` boots: back without the graph work, linked in the background.
{
  const launched = Date.now();
  const s = boot("boot-recovery-background", runArgs(disk, "background"), { kernel, timeoutMs: 300000, stderr: "ignore" });
  try {
    await s.client.connect(s.transport);
    await s.client.listTools();
    const searchArgs = { name: "vector_search", arguments: { collection: "big", vector: probe.vector, k: K, ef: 64 } };
    const t0 = Date.now();
    const first = await s.client.callTool(searchArgs, undefined, { timeout: 120000 });
    const firstMs = Date.now() - t0;
    assert.ok(!first.isError, `vector_search is served: ${JSON.stringify(first)}`);
    const storage = await storageStatus(s.client);
    assert.equal(storage.state, "ready");
    const stats = async () =>
      (await s.client.callTool({ name: "collection_stats", arguments: { collection: "big" } })).structuredContent;
    const early = await stats();
    console.log(`background: vector_search answered ${firstMs} ms after it was called, ${Date.now() - launched} ms after ` +
                `launch; recovery ${storage.recovery.ms} ms in the kernel (${storage.recovery.records} records); ` +
                `${early.unlinked} of ${early.count} vectors still to link`);
    assert.equal(first.structuredContent.hits[0].id, probe.id, "the stored vector is found at once");
    assert.equal(first.structuredContent.hits[0].distance, 0);
    assert.equal(early.count, VECTORS);
    assert.ok(early.unlinked > 0, "recovery left the graph work to the background");
    // An export meanwhile: linking rewrites the graph's pages, so it waits while pages are asked
    // for, and every page belongs to one snapshot (one generation, the sizes adding up).
    {
      const t = Date.now();
      let size = 1, offset = 0, generation = null, pages = 0, bytes = 0;
      while (offset < size) {
        const page = await s.client.callTool({ name: "collection_export", arguments: { collection: "big", offset } },
                                             undefined, { timeout: 60000 });
        assert.ok(!page.isError, `export page at ${offset}: ${JSON.stringify(page).slice(0, 400)}`);
        const p = page.structuredContent;
        generation ??= p.generation;
        assert.equal(p.generation, generation, `page ${pages} (offset ${offset}) of the same snapshot`);
        assert.equal(p.offset, offset);
        bytes += Buffer.from(p.data, "base64").length;
        size = p.size;
        offset = p.next;
        ++pages;
      }
      assert.equal(bytes, size, "the pages add up to the snapshot");
      const during = await stats();
      console.log(`background: exported ${pages} pages (${size} bytes) in ${Date.now() - t} ms while ` +
                  `${during.unlinked} vectors waited to be linked`);
      assert.ok(during.unlinked > 0 && during.unlinked <= early.unlinked);
    }
    // Meanwhile every call is answered, and searches stay exact for what was stored.
    const latencies = [];
    let stats_now = early, searches = 0;
    const deadline = Date.now() + 240000;
    while (stats_now.unlinked > 0) {
      assert.ok(Date.now() < deadline, `linked within 4 minutes (${stats_now.unlinked} left)`);
      const t = Date.now();
      const info = await s.client.callTool({ name: "kernel_info", arguments: {} }, undefined, { timeout: 60000 });
      latencies.push(Date.now() - t);
      assert.ok(!info.isError, JSON.stringify(info));
      const again = await s.client.callTool(searchArgs, undefined, { timeout: 60000 });
      assert.equal(again.structuredContent.hits[0].id, probe.id);
      ++searches;
      stats_now = await stats();
      await sleep(200);
    }
    const linkedMs = Date.now() - launched;
    const after = await s.client.callTool(searchArgs, undefined, { timeout: 60000 });
    assert.equal(after.structuredContent.hits[0].id, probe.id, "found once linked");
    assert.equal(after.structuredContent.hits[0].distance, 0);
    assert.equal(stats_now.count, VECTORS);
    assert.ok(stats_now.levels > 1, "the graph holds them");
    const sorted = [...latencies].sort((a, b) => a - b);
    console.log(`background: every vector linked ${linkedMs} ms after launch; meanwhile ${searches} searches found the ` +
                `stored vector and kernel_info answered in median ${sorted[Math.floor(sorted.length / 2)] ?? "-"} ms, ` +
                `max ${sorted.at(-1) ?? "-"} ms`);
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}

// The boot with data, the graph rebuilt before the store serves: call at once.
{
  const launched = Date.now();
  const s = boot("boot-recovery", runArgs(disk), { kernel, timeoutMs: 300000, stderr: "ignore" });
  try {
    await s.client.connect(s.transport);
    const connectedMs = Date.now() - launched;
    await s.client.listTools();
    const progress = [];
    let searchMs = -1;
    const t0 = Date.now();
    const searchArgs = { name: "vector_search", arguments: { collection: "big", vector: probe.vector, k: K, ef: 256 } };
    const search = s.client.callTool(searchArgs, undefined, { timeout: 120000, onprogress: (p) => progress.push(p) })
      .then((r) => { searchMs = Date.now() - t0; return r; });
    // kernel_info at once, then every 20 ms until the search has answered and the store is back.
    const latencies = [], failures = [];
    let recoveringCalls = 0, storage = null, recoveryPriority = null;
    const storagePriority = async () =>
      (await s.client.callTool({ name: "kernel_tasks", arguments: {} })).structuredContent.tasks.find((t) => t.name === "storage")
        ?.priority;
    for (;;) {
      const priority = recoveryPriority === null ? await storagePriority() : null;
      const t = Date.now();
      const info = await s.client.callTool({ name: "kernel_info", arguments: {} }, undefined, { timeout: 60000 });
      latencies.push(Date.now() - t);
      if (info.isError)
        failures.push(JSON.stringify(envelopeOf(info)));
      storage = await storageStatus(s.client);
      if (storage.state === "recovering") {
        ++recoveringCalls; // answered while the store was still being rebuilt
        recoveryPriority ??= priority;
      }
      else if (searchMs >= 0)
        break;
      await sleep(20);
    }
    let found = await search;
    const firstMs = searchMs;
    const first = found;
    // Past its time limit the call is answered `unavailable`: a client tries again as told.
    for (let tries = 0; found.isError && envelopeOf(found)?.error.code === "unavailable" && tries < 10; ++tries) {
      await sleep(envelopeOf(found).error.details.retry_after_ms);
      found = await s.client.callTool(searchArgs, undefined, { timeout: 120000 });
    }
    const readyPriority = await storagePriority();
    const sorted = [...latencies].sort((a, b) => a - b);
    const pct = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
    console.log(`boot: initialize answered ${connectedMs} ms after launch; vector_search answered ${firstMs} ms after it was ` +
                `called (${progress.length} progress notifications, the last ${JSON.stringify(progress.at(-1) ?? null)}); ` +
                `recovery ${storage.recovery.ms} ms in the kernel (${storage.recovery.records} records); kernel_info: ` +
                `${latencies.length} calls (${recoveringCalls} during recovery), median ${pct(0.5)} ms, p95 ${pct(0.95)} ms, ` +
                `p99 ${pct(0.99)} ms, max ${sorted.at(-1)} ms, ${sorted.filter((ms) => ms >= BOUND_MS).length} over ${BOUND_MS} ms; ` +
                `the storage task at priority ${recoveryPriority} while recovering, ${readyPriority} once ready`);
    console.log(`vector_search: ${JSON.stringify(first).slice(0, 400)}`);
    assert.deepEqual(failures, [], "kernel_info never fails during recovery");
    if (first.isError) {
      const envelope = envelopeOf(first);
      assert.equal(envelope?.error.code, "unavailable", `never internal_error: ${JSON.stringify(first)}`);
      assert.equal(envelope.error.details.reason, "recovering");
      assert.ok(envelope.error.details.retry_after_ms > 0 && envelope.error.details.replayed_so_far >= 0, JSON.stringify(envelope));
      assert.ok(firstMs >= 9000, `it waited out its time limit before saying so (${firstMs} ms)`);
      console.log("vector_search: the recovery outlasted the call's time limit: answered `unavailable`, then served when sent again");
    }
    assert.ok(!found.isError, `vector_search is served: ${JSON.stringify(found)}`);
    assert.equal(found.structuredContent.hits.length, K);
    assert.equal(found.structuredContent.hits[0].id, probe.id, "the stored vector is found after the restart");
    assert.equal(found.structuredContent.hits[0].distance, 0);
    // The search met the recovery (else nothing here was tested): it waited, and said so.
    assert.ok(recoveringCalls >= 5, `kernel_info answered ${recoveringCalls} times while the store was recovered`);
    assert.ok(progress.length >= 1, "the waiting search reported progress");
    assert.ok(pct(0.99) < BOUND_MS, `kernel_info answered within ${BOUND_MS} ms (p99 ${pct(0.99)} ms)`);
    assert.ok(sorted.at(-1) < STALL_MS, `no kernel_info waited for the recovery (max ${sorted.at(-1)} ms)`);
    assert.ok(recoveryPriority !== null && recoveryPriority < TOOL_PRIORITY, `the storage task recovers below the tool tasks (${recoveryPriority})`);
    assert.ok(readyPriority > TOOL_PRIORITY, `and writes the log above them once the store is back (${readyPriority})`);
    const stats = await s.client.callTool({ name: "collection_stats", arguments: { collection: "big" } });
    assert.equal(stats.structuredContent.count, VECTORS);
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}
// Once more, the calls limited to 500 ms: the recovery outlasts them whatever the machine.
{
  const LIMIT_MS = 500;
  const s = boot("boot-recovery-limited", [...runArgs(disk), "--limit", `console:time_ms=${LIMIT_MS}`],
                 { kernel, timeoutMs: 300000, stderr: "ignore" });
  try {
    await s.client.connect(s.transport);
    await s.client.listTools();
    const t0 = Date.now();
    const late = await s.client.callTool({ name: "vector_search", arguments: { collection: "big", vector: probe.vector, k: K } });
    const lateMs = Date.now() - t0;
    const during = await storageStatus(s.client);
    const envelope = envelopeOf(late);
    console.log(`limited to ${LIMIT_MS} ms: vector_search answered after ${lateMs} ms: ${JSON.stringify(envelope?.error)}`);
    assert.equal(during.state, "recovering", "answered while the store was still being recovered");
    assert.ok(late.isError, JSON.stringify(late));
    assert.equal(envelope.error.code, "unavailable", JSON.stringify(envelope));
    assert.equal(envelope.error.details.reason, "recovering");
    assert.ok(envelope.error.details.retry_after_ms > 0, JSON.stringify(envelope));
    assert.ok(envelope.error.details.replayed_so_far >= 0, JSON.stringify(envelope));
    assert.ok(lateMs >= LIMIT_MS - 50, `it waited out its limit first (${lateMs} ms)`);
    // Cancelled while it waits: the SDK sends notifications/cancelled; the call ends unanswered.
    const abort = new AbortController();
    const cancelled = s.client.callTool({ name: "vector_get", arguments: { collection: "big", ids: [probe.id] } }, undefined,
                                        { signal: abort.signal });
    await sleep(100);
    abort.abort("the client moved on");
    await assert.rejects(cancelled);
    await sleep(200);
    const audit = JSON.parse((await s.client.readResource({ uri: "audit://log" })).contents[0].text);
    const records = audit.decisions;
    assert.ok(records.some((r) => r.name === "vector_get" && r.code === "cancelled"),
              `the cancelled call is audited: ${JSON.stringify(records.filter((r) => r.name === "vector_get"))}`);
    await s.done();
  } catch (e) {
    await s.fail(e);
  }
}
console.log("boot_recovery: the store's first calls wait for it and succeed; kernel_info runs ahead of the recovery; " +
            "past the time limit unavailable, cancelled while waiting released");
