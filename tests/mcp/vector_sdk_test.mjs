// The vector store served as MCP tools, from outside, through the official SDK client on
// `qemu/run.sh --stdio`: a collection of real GloVe vectors (cosine) is built, searched, read,
// deleted from and measured, and every answer must equal the host build of the same index
// (tests/host/support/hnsw_cli.cpp) given the same operations: the index is deterministic, so
// ids match exactly and distances to the bit. Also: progress and cancellation of a long batch
// (what was stored before the stop is a prefix of the batch), the same for a batch cut by the
// wall-time limit (a second boot with tool_time_ms=100), a neighbour collection left untouched,
// snapshot export and import, and the admission rows (roles, schema bounds, wrong shapes).
// Usage: node vector_sdk_test.mjs KERNEL_ELF HNSW_CLI
import assert from "node:assert/strict";
import zlib from "node:zlib";
import path from "node:path";
import { pathToFileURL } from "node:url";

import { loadGlove } from "./glove.mjs";
import { HostIndex } from "./hnsw_host.mjs";
import { boot, confirmAsHuman, envelopeOf, root, types } from "./sdk.mjs";

const { CallToolResultSchema } = types;
const { AjvJsonSchemaValidator } = await import(pathToFileURL(
  path.join(root, ".deps/npm/node_modules/@modelcontextprotocol/sdk/dist/esm/validation/ajv-provider.js")));
const [kernel, cli] = process.argv.slice(2);
const N = 3000, Q = 40, DIM = 100, K = 10, EF = 64, BATCH = 500;
const READER = "reader:ada:reader-key-0123456789";
const OPERATOR = "operator:olga:operator-key-0123456789";
// An operator whose tool tasks get 16 KiB of kernel heap (per-principal memory limit).
const TIGHT = "operator:tim:tight-operator-key-0123456789";
const secret = (spec) => spec.split(":").slice(2).join(":");

const data = loadGlove(N + Q + 1500, DIM);
const row = (i) => Array.from(data.subarray(i * DIM, (i + 1) * DIM));
const rows = (from, to) => data.subarray(from * DIM, to * DIM);
// Rows as base64 float32 strings of at most 100 rows each (the kernel's JSON reader takes strings
// up to 64 KiB).
const b64 = (f32, perString = 100 * DIM) => {
  const parts = [];
  for (let at = 0; at < f32.length; at += perString) {
    const part = f32.subarray(at, Math.min(f32.length, at + perString));
    parts.push(Buffer.from(part.buffer, part.byteOffset, part.byteLength).toString("base64"));
  }
  return parts;
};
const idOf = (i) => 1000 + i; // ids are not row numbers: the mapping must survive the round trip

const { client, transport, fail, done } = boot("basalt-vector-test", ["--key", READER, "--key", OPERATOR, "--key", TIGHT,
                                                                   "--limit", "tim:memory_bytes=16384"],
                                               { kernel, timeoutMs: 300000, capabilities: { elicitation: {} } });
confirmAsHuman(client); // drops and large deletes need a human's yes (the sink policy)
const meta = (spec) => (spec ? { _meta: { "io.basalt/api-key": secret(spec) } } : {});
const call = (name, args, key, options) =>
  client.request({ method: "tools/call", params: { name, arguments: args, ...meta(key) } }, CallToolResultSchema,
                 { timeout: 120000, ...options });
// Every successful result is checked against the tool's listed outputSchema (the SDK's own check
// in callTool() covers only the tools of the last tools/list page it saw).
const outputCheck = new Map();
async function ok(name, args, key, options) {
  const r = await call(name, args, key, options).catch((e) => {
    e.message = `${name} at ${new Date().toISOString()}: ${e.message}`; // which call, in the CTest log
    throw e;
  });
  assert.equal(r.isError, false, `${name}: ${JSON.stringify(r)}`);
  const check = outputCheck.get(name);
  if (check) {
    const v = check(r.structuredContent);
    assert.ok(v.valid, `${name}: output does not match its outputSchema: ${v.errorMessage}`);
  }
  return r.structuredContent;
}
async function toolError(name, args, code, reason, key) {
  const r = await call(name, args, key);
  assert.equal(r.isError, true, `${name} must fail with ${code}`);
  assert.equal(envelopeOf(r).error.code, code, JSON.stringify(r));
  if (reason)
    assert.equal(envelopeOf(r).error.details?.reason, reason, JSON.stringify(r));
}
async function refused(promise, rpcCode, code, check = () => {}) {
  await assert.rejects(promise, (err) => {
    assert.equal(err.code, rpcCode, `${code}: ${err.message}`);
    assert.equal(err.data.ok, false);
    assert.equal(err.data.error.code, code);
    check(err.data);
    return true;
  });
}
const sameFloat = (a, b) => Math.fround(a) === Math.fround(b);

// A second boot with a 100 ms wall-time limit: a 1,500-vector batch is answered
// limit_time_exceeded, and what it stored before stopping is a prefix of the batch.
async function overTime() {
  const second = boot("basalt-vector-time", ["--append", "tool_time_ms=100"], { kernel, timeoutMs: 120000 });
  try {
    await second.client.connect(second.transport);
    const run = (name, args) => second.client.request({ method: "tools/call", params: { name, arguments: args } },
                                                      CallToolResultSchema, { timeout: 60000 });
    await run("collection_create", { name: "late", dim: DIM, metric: "cosine", max_elements: 2000 });
    const ids = Array.from({ length: 1500 }, (_, i) => 70000 + i);
    const r = await run("vector_upsert", { collection: "late", ids, vectors_f32: b64(rows(0, 1500), 25 * DIM) });
    assert.equal(r.isError, true, JSON.stringify(r));
    assert.equal(envelopeOf(r).error.code, "limit_time_exceeded");
    // The task stops at its next chunk and logs what it kept: wait for that record (however slow
    // the machine), then the collection holds exactly that prefix.
    const stopped = /stopped at the wall-time limit after (\d+) of 1500/;
    let kept = -1;
    for (let i = 0; i < 100 && kept < 0; ++i) {
      const log = (await run("kernel_log", { limit: 200, min_level: "notice" })).structuredContent;
      const rec = log.records.find((r) => stopped.test(r.text));
      if (rec)
        kept = Number(stopped.exec(rec.text)[1]);
      else
        await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(kept >= 0, "the kernel log reports what the stopped batch kept");
    assert.ok(kept < ids.length, `kept ${kept}`);
    const count = (await run("collection_stats", { collection: "late" })).structuredContent.count;
    assert.equal(count, kept, "the collection holds what the log says the batch kept");
    if (kept > 0) {
      const edge = (await run("vector_get", { collection: "late", ids: [ids[0], ids[kept - 1], ids[kept]] })).structuredContent;
      assert.deepEqual(edge.missing, [ids[kept]], "the stored ids are a prefix");
    }
    await second.done();
    return kept;
  } catch (e) {
    await second.fail(e);
  }
}

try {
  await client.connect(transport);
  // Every vector tool is listed (all pages) with both schemas and a bounded input schema.
  const listed = new Map();
  for (let cursor, page = 0; page < 20; ++page) {
    const r = await client.listTools(cursor ? { cursor } : {});
    r.tools.forEach((t) => listed.set(t.name, t));
    if (!(cursor = r.nextCursor))
      break;
  }
  for (const name of ["collection_create", "collection_drop", "collection_list", "collection_stats", "vector_upsert",
                      "vector_search", "vector_get", "vector_delete", "collection_export", "collection_import"]) {
    const t = listed.get(name);
    assert.ok(t && t.inputSchema.additionalProperties === false && t.outputSchema, `${name} listed with schemas`);
    outputCheck.set(name, new AjvJsonSchemaValidator().getValidator(t.outputSchema));
  }

  const params = { dim: DIM, metric: "cosine", m: 12, ef_construction: 100, max_elements: 4000 };
  const created = await ok("collection_create", { name: "glove", ...params });
  assert.equal(created.max_elements, 4000);
  assert.equal(created.metric, "cosine");
  const host = new HostIndex(params);
  // A neighbour collection (ids 1..10, the same words): nothing done to "glove" may reach it.
  await ok("collection_create", { name: "other", dim: DIM, metric: "l2", max_elements: 100 });
  await ok("vector_upsert", { collection: "other", ids: Array.from({ length: 10 }, (_, i) => i + 1),
                              vectors_f32: b64(rows(0, 10)) });
  const otherBefore = await ok("collection_stats", { collection: "other" });
  // The same upsert from tim, whose tool tasks may hold 16 KiB of heap: refused, nothing stored.
  const tight = await call("vector_upsert", { collection: "other", ids: [11], vectors_f32: b64(rows(10, 11)) }, TIGHT);
  assert.equal(tight.isError, true);
  assert.equal(envelopeOf(tight).error.code, "internal_error");
  assert.equal(envelopeOf(tight).error.details.reason, "no_memory");
  assert.equal((await ok("collection_stats", { collection: "other" })).count, otherBefore.count);

  // Upsert in batches (base64 float32), the first with progress notifications; the last batch,
  // 500 rows of 100-d vectors, as plain JSON arrays in one call (as clients of every vector
  // database send them; ~50,000 JSON values in one message): both encodings must store the same
  // floats.
  let t0 = Date.now();
  const progress = [];
  let jsonBatchBytes = 0;
  for (let from = 0; from < N; from += BATCH) {
    const to = Math.min(N, from + BATCH);
    const ids = Array.from({ length: to - from }, (_, i) => idOf(from + i));
    if (to === N) {
      const args = { collection: "glove", ids, vectors: ids.map((_, i) => row(from + i)) };
      jsonBatchBytes = JSON.stringify(args).length;
      const r = await ok("vector_upsert", args, OPERATOR);
      assert.equal(r.upserted, ids.length);
      assert.equal(r.count, N);
    } else {
      const args = { collection: "glove", ids, vectors_f32: b64(rows(from, to)) };
      const r = await ok("vector_upsert", args, OPERATOR, from === 0 ? { onprogress: (p) => progress.push(p) } : {});
      assert.equal(r.upserted, ids.length);
    }
    host.upsert(ids, rows(from, to));
  }
  const insertMs = Date.now() - t0;
  assert.ok(progress.length >= 2, `progress notifications: ${JSON.stringify(progress)}`);
  assert.ok(progress.every((p, i) => p.total === BATCH && (i === 0 || p.progress > progress[i - 1].progress)),
            JSON.stringify(progress));

  // Searches with held-out words, some restricted to an id filter.
  const queries = Array.from({ length: Q }, (_, q) => row(N + q));
  const filter = Array.from({ length: 400 }, (_, i) => idOf(i * 7));
  const kernelAnswers = [];
  // Two rounds, each with its own principal (reader, then operator): both roles may search.
  const searchAll = async (key) => {
    t0 = Date.now();
    for (let q = 0; q < Q; ++q) {
      const args = { collection: "glove", vector: queries[q], k: K, ef: EF };
      if (q % 8 === 7)
        args.filter_ids = filter;
      kernelAnswers.push((await ok("vector_search", args, key)).hits);
      host.search(queries[q], K, EF, args.filter_ids ?? []);
    }
    return Date.now() - t0;
  };
  const searchMs = await searchAll(READER);

  const probe = [idOf(0), idOf(1), idOf(1499), idOf(N - 1)];
  const got = await ok("vector_get", { collection: "glove", ids: [...probe, 99] }, READER);
  assert.deepEqual(got.missing, [99]);
  for (const id of probe)
    host.get(id);

  // Delete the three nearest of every query (they would otherwise come back), plus one absent id.
  const doomed = [...new Set(kernelAnswers.flatMap((hits) => hits.slice(0, 3).map((h) => h.id)))];
  const del = await ok("vector_delete", { collection: "glove", ids: [...doomed, 424242] }, OPERATOR);
  assert.equal(del.deleted, doomed.length);
  assert.deepEqual(del.missing, [424242]);
  host.remove(doomed);
  const before = kernelAnswers.length;
  await searchAll(undefined);
  const stats = await ok("collection_stats", { collection: "glove" }, READER);
  host.stats();

  // The host build, same operations: identical answers.
  const hostAnswers = host.run(cli);
  const hostSearches = hostAnswers.filter((_, i) => host.kinds[i] === "search");
  assert.equal(hostSearches.length, kernelAnswers.length);
  kernelAnswers.forEach((hits, i) => {
    assert.deepEqual(hits.map((h) => h.id), hostSearches[i].ids, `query ${i}: kernel and host ids differ`);
    hits.forEach((h, j) => assert.ok(sameFloat(h.distance, hostSearches[i].distances[j]),
                                     `query ${i} hit ${j}: ${h.distance} vs ${hostSearches[i].distances[j]}`));
    assert.equal(hits.length, K);
    if (i % 8 === 7 || (i - before) % 8 === 7)
      assert.ok(hits.every((h) => filter.includes(h.id)), `query ${i}: a hit outside the filter`);
    if (i >= before)
      assert.ok(hits.every((h) => !doomed.includes(h.id)), `query ${i}: a deleted id came back`);
  });
  const hostGets = hostAnswers.filter((_, i) => host.kinds[i] === "get");
  for (const [i, id] of probe.entries()) {
    const mine = got.vectors.find((v) => v.id === id);
    assert.ok(mine, `vector_get ${id}`);
    assert.equal(mine.vector.length, DIM);
    assert.ok(mine.vector.every((x, d) => sameFloat(x, hostGets[i].vector[d])), `vector ${id} differs from the host's`);
  }
  const hostStats = hostAnswers.at(-1);
  assert.equal(stats.count, N - doomed.length);
  for (const key of ["count", "deleted", "levels", "distance_computations"])
    assert.equal(stats[key], hostStats[key], `stats.${key}: kernel ${stats[key]}, host ${hostStats[key]}`);
  const list = await ok("collection_list", {}, READER);
  assert.deepEqual(list.collections.map((c) => [c.name, c.dim, c.metric, c.count]),
                   [["glove", DIM, "cosine", N - doomed.length], ["other", DIM, "l2", 10]]);
  assert.deepEqual(await ok("collection_stats", { collection: "other" }), otherBefore, "the neighbour collection is untouched");
  assert.ok(kernelAnswers.every((hits) => hits.every((h) => h.id >= idOf(0))), "no id of the neighbour in glove's answers");
  assert.deepEqual(await ok("collection_drop", { name: "other" }), { dropped: "other" });

  // Admission: roles, schema bounds, wrong shapes, missing collections.
  await refused(call("vector_upsert", { collection: "glove", ids: [1], vectors: [row(0)] }, READER), -32001,
                "auth_insufficient_role", (env) => assert.equal(env.error.details.required, "vector:write"));
  await refused(call("collection_create", { name: "x", dim: 4, metric: "l2" }, OPERATOR), -32001,
                "auth_insufficient_role", (env) => assert.equal(env.error.details.required, "vector:admin"));
  // (A message of more than 4,096 JSON values is refused whole by the dispatcher's reader, so
  // schema bounds are shown on what fits: 17 ids where 16 are allowed, a dimension over 4,096.)
  // (2025-11-25: schema failures are isError results the model can read, SEP-1303.)
  await toolError("vector_get", { collection: "glove", ids: Array.from({ length: 17 }, (_, i) => idOf(i)) },
                  "validation_failed", "too_many_items", READER);
  await toolError("collection_create", { name: "../etc", dim: 4, metric: "l2" }, "validation_failed", "bad_name");
  await toolError("collection_create", { name: "big", dim: 4097, metric: "l2" }, "validation_failed", "above_maximum");
  await toolError("vector_search", { collection: "glove", vector: row(0).slice(1) }, "validation_failed", "dimension_mismatch");
  await toolError("vector_search", { collection: "glove", vector: [...row(0), 0.5] }, "validation_failed", "dimension_mismatch");
  await toolError("vector_upsert", { collection: "glove", ids: [7], vectors: [[...row(0), 0.5]] }, "validation_failed",
                  "invalid_vector");
  const nan = new Float32Array(DIM).fill(0.25);
  nan[7] = Number.NaN;
  await toolError("vector_upsert", { collection: "glove", ids: [7], vectors_f32: b64(nan) }, "validation_failed", "invalid_vector");
  await toolError("vector_upsert", { collection: "glove", ids: [7, 8], vectors: [row(0)] }, "validation_failed", "count_mismatch");
  await toolError("vector_search", { collection: "nowhere", vector: row(0) }, "not_found", "missing_collection");
  await toolError("collection_create", { name: "glove", ...params }, "validation_failed", "exists");
  assert.equal((await ok("collection_stats", { collection: "glove" })).count, N - doomed.length, "refused calls stored nothing");

  // Cancellation of a long batch: the task stops between chunks, what it stored is a prefix.
  await ok("collection_create", { name: "bulk", dim: DIM, metric: "cosine", m: 16, ef_construction: 200, max_elements: 2000 });
  const bulkIds = Array.from({ length: 1500 }, (_, i) => 50000 + i);
  const ac = new AbortController();
  let firstStep;
  const stepped = new Promise((resolve) => (firstStep = resolve));
  const long = call("vector_upsert", { collection: "bulk", ids: bulkIds, vectors_f32: b64(rows(N + Q, N + Q + 1500)) }, undefined,
                    { signal: ac.signal, onprogress: () => firstStep() });
  await stepped;
  ac.abort("test cancels");
  await assert.rejects(long);
  let running = true;
  for (let i = 0; i < 50 && running; ++i) {
    await new Promise((r) => setTimeout(r, 100));
    const tasks = await ok("kernel_tasks", {});
    running = tasks.tasks.some((t) => t.name === "tool:vector_upsert");
  }
  assert.ok(!running, "the cancelled upsert task ended");
  const kept = (await ok("collection_stats", { collection: "bulk" })).count;
  assert.ok(kept > 0 && kept < bulkIds.length, `kept ${kept} of ${bulkIds.length}`);
  const edge = await ok("vector_get", { collection: "bulk", ids: [bulkIds[0], bulkIds[kept - 1], bulkIds[kept], bulkIds.at(-1)] });
  assert.deepEqual(edge.vectors.map((v) => v.id), [bulkIds[0], bulkIds[kept - 1]], "the stored ids are a prefix");
  const log = await ok("kernel_log", { limit: 200, min_level: "notice" });
  assert.ok(log.records.some((r) => r.text.includes(`vector_upsert cancelled after ${kept} of ${bulkIds.length}`)),
            "the kernel log reports what the cancelled batch kept");

  // Backup: export the kept collection page by page, import it under a new name, and the copy
  // answers like the original. Damaged snapshots are refused whole.
  const pages = [];
  for (let offset = 0, guard = 0; guard < 100; ++guard) {
    const page = await ok("collection_export", { collection: "bulk", offset, length: 20000 }, READER);
    pages.push(page);
    offset = page.next;
    if (offset === page.size)
      break;
  }
  assert.ok(pages.length >= 2, `${pages.length} export pages`);
  assert.ok(pages.every((p) => p.size === pages[0].size && p.generation === pages[0].generation), "pages of one snapshot");
  assert.ok(pages.every((p) => zlib.crc32(Buffer.from(p.data, "base64")) === p.page_crc32), "each page's CRC-32");
  const snapshot = Buffer.concat(pages.map((p) => Buffer.from(p.data, "base64")));
  assert.equal(snapshot.length, pages[0].size);
  const snapshotCrc = zlib.crc32(snapshot);
  const parts = (buf) => Array.from({ length: Math.ceil(buf.length / 40000) },
                                    (_, i) => buf.subarray(i * 40000, (i + 1) * 40000).toString("base64"));
  await refused(call("collection_import", { name: "copy", snapshot_b64: parts(snapshot), size: snapshot.length }, OPERATOR),
                -32001, "auth_insufficient_role");
  const damaged = Buffer.from(snapshot);
  damaged[Math.floor(damaged.length / 2)] ^= 0x40;
  await toolError("collection_import", { name: "copy", snapshot_b64: parts(damaged), size: damaged.length },
                  "validation_failed", "corrupt_snapshot");
  await toolError("collection_import", { name: "copy", snapshot_b64: parts(damaged), size: damaged.length,
                                         crc32: snapshotCrc }, "validation_failed", "crc_mismatch");
  const cut = snapshot.subarray(0, snapshot.length - 1000);
  await toolError("collection_import", { name: "copy", snapshot_b64: parts(cut), size: cut.length },
                  "validation_failed", "truncated_snapshot");
  // In chunks: out of order is refused, then three in order import it.
  const third = Math.ceil(snapshot.length / 3);
  const chunk = (i) => ({ name: "copy", size: snapshot.length, offset: i * third,
                          snapshot_b64: parts(snapshot.subarray(i * third, (i + 1) * third)), crc32: snapshotCrc });
  await toolError("collection_import", chunk(1), "validation_failed", "no_import");
  assert.deepEqual(await ok("collection_import", chunk(0)), { name: "copy", size: snapshot.length, received: third, next: third });
  await toolError("collection_import", chunk(2), "validation_failed", "out_of_order");
  assert.equal((await ok("collection_import", chunk(1))).next, 2 * third);
  // Sized by what the snapshot holds (twice its slots, at least 1024), never beyond the 2,000 it declares.
  // The answer names the import's provenance node: what the imported vectors remember.
  const node = (answer) => (assert.match(answer.provenance_node_id, /^[0-9a-f]{8}-[1-9][0-9]*$/), { ...answer, provenance_node_id: "" });
  assert.deepEqual(node(await ok("collection_import", chunk(2))),
                   { imported: "copy", size: snapshot.length, max_elements: Math.min(2000, Math.max(2 * kept, 1024)), provenance_node_id: "" });
  // Or as asked: the declared capacity back; never below the slots it uses.
  const whole = { snapshot_b64: parts(snapshot), size: snapshot.length };
  assert.deepEqual(node(await ok("collection_import", { name: "copy2", ...whole, max_elements: 2000 })),
                   { imported: "copy2", size: snapshot.length, max_elements: 2000, provenance_node_id: "" });
  assert.deepEqual(await ok("collection_drop", { name: "copy2" }), { dropped: "copy2" });
  if (kept > 1)
    await toolError("collection_import", { name: "copy2", ...whole, max_elements: kept - 1 }, "validation_failed", "capacity_too_small");
  const [orig, copy] = [await ok("collection_stats", { collection: "bulk" }), await ok("collection_stats", { collection: "copy" })];
  for (const key of ["count", "deleted", "levels"])
    assert.equal(copy[key], orig[key], `imported ${key}`);
  for (let q = 0; q < 5; ++q) {
    const a = await ok("vector_search", { collection: "bulk", vector: queries[q], k: K, ef: EF });
    const b = await ok("vector_search", { collection: "copy", vector: queries[q], k: K, ef: EF });
    assert.deepEqual(b.hits, a.hits, `query ${q} on the imported copy`);
    assert.equal(a.count, Math.min(K, kept));
  }
  assert.deepEqual(await ok("collection_drop", { name: "copy" }), { dropped: "copy" });

  assert.deepEqual(await ok("collection_drop", { name: "bulk" }), { dropped: "bulk" });
  assert.deepEqual(await ok("collection_drop", { name: "glove" }), { dropped: "glove" });
  await toolError("collection_stats", { collection: "glove" }, "not_found", "missing_collection");
  await toolError("collection_drop", { name: "glove" }, "not_found", "missing_collection");
  assert.deepEqual((await ok("collection_list", {})).collections, []);

  await done();
  const late = await overTime();
  console.log(`vector tools: ${N} GloVe vectors upserted in ${insertMs} ms (${BATCH} per call; the last ${BATCH} ` +
              `as one ${(jsonBatchBytes / 1024).toFixed(0)} KiB JSON message), ` +
              `${Q} searches in ${searchMs} ms, ${doomed.length} deleted; kernel = host build on ` +
              `${kernelAnswers.length} searches, ${probe.length} gets and the stats; cancelled batch kept ${kept} of 1500; ` +
              `its snapshot (${snapshot.length} bytes, ${pages.length} pages) imported as an identical copy; ` +
              `a 1,500-vector batch at a 100 ms limit kept ${late}`);
} catch (e) {
  await fail(e);
}
