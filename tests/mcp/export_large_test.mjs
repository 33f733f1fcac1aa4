// collection_export works for every collection the store allows: a collection filled to its
// 64 MiB budget (1024-d vectors) is exported page by page (each page built alone, so the tool
// needs no buffer of the snapshot's size) and imported again in chunks under a new name; the copy
// has the same counts and answers searches and reads exactly like the original.
// Usage: node export_large_test.mjs KERNEL_ELF
import assert from "node:assert/strict";
import zlib from "node:zlib";

import { boot, confirmAsHuman, types } from "./sdk.mjs";

const { CallToolResultSchema } = types;
const kernel = process.argv[2];
const DIM = 1024;
const BUDGET = 64 << 20;
const { client, transport, fail, done } = boot("basalt-export-large-test", [], { kernel, timeoutMs: 900000,
                                                                                capabilities: { elicitation: {} } });
confirmAsHuman(client); // the drops at the end need a human's yes (the sink policy)

async function ok(name, args) {
  const r = await client.request({ method: "tools/call", params: { name, arguments: args } }, CallToolResultSchema, { timeout: 600000 });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r).slice(0, 400)}`);
  return r.structuredContent;
}

// Deterministic pseudo-random rows (xorshift), the same for the same id.
function row(id) {
  const v = new Float32Array(DIM);
  let x = (id * 2654435761) >>> 0 || 1;
  for (let d = 0; d < DIM; ++d) {
    x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
    v[d] = (x / 4294967296) * 2 - 1;
  }
  return v;
}

try {
  await client.connect(transport);
  const t0 = performance.now();
  const created = await ok("collection_create", { name: "big", dim: DIM, metric: "l2", m: 4, ef_construction: 8, budget_bytes: BUDGET });
  const capacity = created.max_elements;
  // Fill it to capacity: 180 rows (720 KiB of floats) per call, inside the 1 MiB line.
  const PER_CALL = 180;
  for (let from = 0; from < capacity; from += PER_CALL) {
    const ids = Array.from({ length: Math.min(PER_CALL, capacity - from) }, (_, i) => from + i + 1);
    const rows = ids.map(row);
    const strings = [];
    for (let i = 0; i < rows.length; i += 12) // 12 rows (48 KiB) per base64 string, under 64 KiB
      strings.push(Buffer.concat(rows.slice(i, i + 12).map((r) => Buffer.from(r.buffer))).toString("base64"));
    const r = await ok("vector_upsert", { collection: "big", ids, vectors_f32: strings });
    assert.equal(r.upserted, ids.length);
  }
  const stats = await ok("collection_stats", { collection: "big" });
  assert.equal(stats.count, capacity);
  const fillSeconds = (performance.now() - t0) / 1000;

  // Export, page by page.
  const t1 = performance.now();
  const pages = [];
  let first;
  for (let offset = 0, guard = 0; guard < 5000; ++guard) {
    const page = await ok("collection_export", { collection: "big", offset });
    const data = Buffer.from(page.data, "base64");
    assert.equal(zlib.crc32(data), page.page_crc32, `page at ${offset}`);
    first ??= page;
    assert.ok(page.generation === first.generation && page.size === first.size, "pages of one snapshot");
    pages.push(data);
    offset = page.next;
    if (offset === page.size)
      break;
  }
  const snapshot = Buffer.concat(pages);
  assert.equal(snapshot.length, first.size);
  assert.ok(snapshot.length > 60 * (1 << 20), `a snapshot of ${snapshot.length} bytes`);
  const exportSeconds = (performance.now() - t1) / 1000;

  // Import, in chunks of 720 KiB.
  const t2 = performance.now();
  const CHUNK = 720 * 1024;
  const crc32 = zlib.crc32(snapshot);
  let answer;
  let pingsDuringLoad = 0;
  for (let offset = 0; offset < snapshot.length; offset += CHUNK) {
    const piece = snapshot.subarray(offset, offset + CHUNK);
    const strings = [];
    for (let i = 0; i < piece.length; i += 48 * 1024)
      strings.push(piece.subarray(i, i + 48 * 1024).toString("base64"));
    const last = offset + CHUNK >= snapshot.length;
    const call = ok("collection_import", { name: "copy", size: snapshot.length, offset, snapshot_b64: strings, crc32 });
    if (last) {
      // The last chunk commits: a 64 MiB load runs in a vector worker, preemptible and below the
      // bridges, so the line keeps answering meanwhile (the load used to run inside the system
      // call with interrupts masked: nothing answered until it was done).
      let loading = true;
      call.finally(() => { loading = false; }).catch(() => {});
      while (loading) { // four a second: the line answering, not a flood competing with the load
        await client.ping();
        if (loading)
          ++pingsDuringLoad;
        await new Promise((r) => setTimeout(r, 250));
      }
    }
    answer = await call;
    if (!last)
      assert.equal(answer.next, offset + piece.length);
  }
  assert.match(answer.provenance_node_id, /^[0-9a-f]{8}-[1-9][0-9]*$/, "the imported vectors remember this import");
  assert.deepEqual({ ...answer, provenance_node_id: "" }, { imported: "copy", size: snapshot.length, max_elements: capacity, provenance_node_id: "" });
  assert.ok(pingsDuringLoad > 0, "no ping was answered while the snapshot loaded");
  const importSeconds = (performance.now() - t2) / 1000;
  let loadLine;
  for (let since = 0, page = 0; !loadLine && page < 50; ++page) {
    const log = await ok("kernel_log", { since, limit: 100, min_level: "info" });
    loadLine = log.records.map((r) => r.text).find((t) => /vector: snapshot of \d+ bytes loaded/.test(t));
    if (log.records.length === 0)
      break;
    since = log.next;
  }
  assert.ok(loadLine, "the kernel log reports the load");
  const [, loadMs, ticks] = loadLine.match(/loaded in (\d+) ms \(capacity \d+\), (\d+) timer interrupts meanwhile/).map(Number);
  // 100 Hz ticks: the clock kept ticking through the load (masked interrupts would leave it at 0 or 1);
  // half the expected count leaves room for ticks the host delivered late.
  assert.ok(ticks >= Math.floor(loadMs / 20) - 1, `${ticks} timer interrupts during a ${loadMs} ms load`);

  const copy = await ok("collection_stats", { collection: "copy" });
  for (const key of ["count", "deleted", "levels", "dim"])
    assert.equal(copy[key], stats[key], key);
  for (const id of [1, 777, capacity]) {
    const q = Array.from(row(id));
    const a = await ok("vector_search", { collection: "big", vector: q, k: 5, ef: 32 });
    const b = await ok("vector_search", { collection: "copy", vector: q, k: 5, ef: 32 });
    assert.deepEqual(b.hits, a.hits, `search for ${id}`);
    const got = await ok("vector_get", { collection: "copy", ids: [id] });
    assert.deepEqual(got.vectors[0].vector.map(Math.fround), Array.from(row(id)), `vector ${id} read back from the copy`);
  }
  console.log(`export_large_test: ${capacity} vectors of ${DIM}-d filled in ${fillSeconds.toFixed(1)} s; ` +
              `${snapshot.length} bytes exported in ${pages.length} pages in ${exportSeconds.toFixed(1)} s ` +
              `(${(snapshot.length / (1 << 20) / exportSeconds).toFixed(1)} MiB/s), imported in chunks in ` +
              `${importSeconds.toFixed(1)} s (the load ${loadMs} ms, ${pingsDuringLoad} pings answered meanwhile); ` +
              `the copy answers like the original`);
  await ok("collection_drop", { name: "copy" });
  await ok("collection_drop", { name: "big" });
  await done();
} catch (e) {
  await fail(e);
}
